"""The chat desk: a customer's turn in, the desk's reply out (at once, or after the agents wrote it)."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Query, Response

from relay_graph.desk import chat as chat_turns
from relay_graph.runtime.errors import Unavailable
from relay_graph.memory.facade import Memory
from relay_graph.runtime.streams import ReplyWritten, TurnReceived
from relay_graph.usecases import chat as chat_cases
from relay_graph.usecases.context import Call

from ..bus import Bus
from ..deps import BusDep, MemoryDep, TenantDep
from ..errors import responses
from ..idempotency import Idempotency, IdempotencyDep
from ..schemas import Answer, ChatAccepted, ChatAnswered, ChatBody, ChatReplyView, ChatTicketView

router = APIRouter(prefix="/v1/tenants/{t}", tags=["desk"])

MAX_WAIT_SECONDS = 30.0
STILL_HANDLING = "the desk is still handling this turn; its reply will appear on the live feed and in the session"

DESCRIPTION = f"""A customer is their id. A first turn leaves `customer` out (and may give the
customer's `name`): a new customer is made, and their id comes back in `customer` for the next
turns. Two people of one name are two customers; an id is never matched to another spelt alike.

Stores the customer's turn in the session (a new session when none is given; a
session belongs to the customer who opened it, so another customer's session is refused with 409)
and hands it to the desk.

Without `wait`: 202 `{{session, episode_id, customer}}` at once. With `wait` (seconds, at most
{MAX_WAIT_SECONDS:g}): 200 with the desk's reply (`text` and `how_i_know`, the graph rows it rests
on) and the ticket it concerns, as soon as the reply is written; if it is not written in time, 202
with a `note` (the reply still comes: on the live feed and in the session).

503 when the notification streams refuse the turn's announcement: the turn is stored all the same
and reaches the desk a moment later (nothing is lost; send `Idempotency-Key` to retry safely)."""


async def _announce(memory, bus, tenant: str, announced: TurnReceived, idem: Idempotency,
                    accepted: ChatAccepted) -> None:
    """Publish the turn's announcement and take it out of the outbox. A publish that fails is
    503 with nothing lost: the turn and its announcement are in the graph, and the outbox relay
    publishes it shortly (relay_graph.runtime.outbox); a retry with the same Idempotency-Key gets the
    turn's 202 instead of storing it again."""
    try:
        await bus.publish(announced)
    except Unavailable as exc:
        await idem.keep(202, accepted)
        raise Unavailable(f"turn {announced.id} of session {announced.session} is stored and will reach the desk "
                          "shortly (its reply appears in the session); the notification streams are not "
                          "taking entries right now") from exc
    await (await bus.outbox()).done(tenant, [str(announced.notification_id)])


# The 202 is a ChatAccepted, the 200 a ChatAnswered: the route's model is either (the 202's schema says
# so), the 200's is documented on its own.
@router.post("/chat", status_code=202, response_model=Answer[ChatAccepted | ChatAnswered],
             responses={200: {"model": ChatAnswered, "description": "the desk replied within `wait`"},
                        **responses(401, 403, 409, 413, 422, 429, 503)},
             summary="Send a customer's message to the desk", description=DESCRIPTION)
async def chat(
    body: ChatBody,
    tenant: TenantDep,
    memory: MemoryDep,
    bus: BusDep,
    idem: IdempotencyDep,
    response: Response,
    wait: Annotated[float, Query(ge=0, le=MAX_WAIT_SECONDS,
                                 description="seconds to wait for the reply; 0 answers at once")] = 0,
) -> ChatAccepted | ChatAnswered:
    if body.customer is not None:
        chat_turns.check_customer(body.customer)
    return await idem.run_once(tenant, "chat", body, response, lambda: take_turn(
        memory, bus, idem, response, tenant, customer=body.customer, name=body.name, text=body.text,
        session=body.session, wait=wait))


async def take_turn(memory: Memory, bus: Bus, idem: Idempotency, response: Response, tenant: str, *,
                    customer: str | None, text: str, session: str | None, wait: float,
                    name: str | None = None) -> ChatAccepted | ChatAnswered:
    """A turn in, the 202 or 200 answer out (its status set on `response`): what POST /chat and the
    customer site's POST /me/chat (always with the session's customer) both do."""
    if wait > 0:
        # Before anything is written: a gateway that cannot see replies refuses to wait for one.
        await bus.tail.start()
    await (await bus.outbox()).mark(tenant)  # the turn's statement keeps its announcement: the relay looks here
    call = Call(memory, tenant, chat_turns.AGENT, bus)
    turn, owed = await chat_cases.record_turn(call, customer=customer, name=name, text=text, session=session)
    await call.notify(*owed)
    announced = chat_turns.announcement(tenant, turn)
    accepted = ChatAccepted(session=turn.session, episode_id=turn.episode_id, customer=turn.customer)
    response.status_code = 202
    if wait <= 0:
        await _announce(memory, bus, tenant, announced, idem, accepted)
        return accepted

    with bus.waiters.expect(tenant, turn.episode_id) as replied:  # registered before the turn is announced
        await _announce(memory, bus, tenant, announced, idem, accepted)
        try:
            written: ReplyWritten = await asyncio.wait_for(asyncio.shield(replied), wait)
        except asyncio.TimeoutError:
            return accepted.model_copy(update={"note": STILL_HANDLING})

    # the reply and its ticket's stage in one read
    reply, ticket = await chat_turns.get_reply_and_ticket(memory.client, tenant, written.id, written.ticket_id)
    if reply is None:  # announced but not readable (cannot happen unless the graph lost it)
        return accepted.model_copy(update={"note": STILL_HANDLING})
    response.status_code = 200
    return ChatAnswered(session=turn.session, episode_id=turn.episode_id, customer=turn.customer,
                        reply=ChatReplyView(text=reply.text, how_i_know=reply.how_i_know, answers=reply.answers),
                        ticket=ChatTicketView(id=ticket.id, stage=ticket.stage) if ticket else None)
