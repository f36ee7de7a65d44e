"""The chat desk: a customer's turn in, the desk's reply out (at once, or after the agents wrote it)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response

from relay_graph.desk.conversation import turns as chat_turns
from relay_graph.usecases import chat as chat_cases
from relay_graph.usecases.context import Call

from ..deps import DepsDep, FeedDep, MemoryDep, TenantDep
from ..errors import responses
from ..feed import Feed
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


async def desk_call(tenant: TenantDep, deps: DepsDep, memory: MemoryDep) -> Call:
    """The call a customer's turn is taken in: the key's tenant, written down by the desk's front
    door (desk.chat.AGENT), announced through the process's outbox."""
    return deps.call(tenant, chat_turns.AGENT)


DeskCallDep = Annotated[Call, Depends(desk_call)]


# The 202 is a ChatAccepted, the 200 a ChatAnswered: the route's model is either (the 202's schema says
# so), the 200's is documented on its own.
@router.post("/chat", status_code=202, response_model=Answer[ChatAccepted | ChatAnswered],
             responses={200: {"model": ChatAnswered, "description": "the desk replied within `wait`"},
                        **responses(401, 403, 409, 413, 422, 429, 503)},
             summary="Send a customer's message to the desk", description=DESCRIPTION)
async def chat(
    body: ChatBody,
    call: DeskCallDep,
    feed: FeedDep,
    idem: IdempotencyDep,
    response: Response,
    wait: Annotated[float, Query(ge=0, le=MAX_WAIT_SECONDS,
                                 description="seconds to wait for the reply; 0 answers at once")] = 0,
) -> ChatAccepted | ChatAnswered:
    if body.customer is not None:
        chat_turns.check_customer(body.customer)
    return await idem.run_once(call.tenant, "chat", body, response, lambda: answer_turn(
        call, feed, idem, response, customer=body.customer, name=body.name, text=body.text,
        session=body.session, wait=wait))


async def answer_turn(call: Call, feed: Feed, idem: Idempotency, response: Response, *, customer: str | None,
                      text: str, session: str | None, wait: float, name: str | None = None
                      ) -> ChatAccepted | ChatAnswered:
    """The use case's turn as POST /chat and the customer site's POST /me/chat answer it: 202 with
    the turn (a `note` when the wait ran out), 200 with the reply. A turn stored but not announced
    is 503 with nothing lost; a retry with the same Idempotency-Key gets the turn's 202 instead of
    storing it again."""
    try:
        # stored (its announcements owed on the call), then announced and waited for: the reply's
        # expectation is registered before the announcement goes out (usecases/chat.await_reply)
        turn = await chat_cases.take_turn(call, customer=customer, name=name, text=text, session=session,
                                          replies=feed, wait=wait)
        taken = await chat_cases.await_reply(call, turn, feed, wait)
    except chat_cases.TurnNotAnnounced as exc:
        await idem.keep(202, _accepted(exc.turn))
        raise
    accepted = _accepted(taken.turn)
    response.status_code = 202
    if taken.reply is None:
        return accepted.model_copy(update={"note": STILL_HANDLING}) if taken.waited else accepted
    response.status_code = 200
    turn, reply, ticket = taken.turn, taken.reply, taken.ticket
    return ChatAnswered(session=turn.session, episode_id=turn.episode_id, customer=turn.customer,
                        reply=ChatReplyView(text=reply.text, how_i_know=reply.how_i_know, answers=reply.answers),
                        ticket=ChatTicketView(id=ticket.id, stage=ticket.stage) if ticket else None)


def _accepted(turn: chat_turns.RecordedTurn) -> ChatAccepted:
    return ChatAccepted(session=turn.session, episode_id=turn.episode_id, customer=turn.customer)
