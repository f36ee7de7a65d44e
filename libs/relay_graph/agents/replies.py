"""What the desk says goes into the graph first, then onto the stream.

A reply is an `AgentReply` episode in a customer's session, with the turn it answers
(`reply_to`), the ticket it concerns and the graph rows its words rest on (`how_i_know`). Its id
is deterministic (see relay_graph.desk), so a redelivered notification finds the reply it wrote
the first time. `ReplyWritten` is published only after the episode is stored; it carries ids,
never the text.

`reply_to` is the customer turn a reply answers. Status updates nobody asked for (the resolver's
progress, netops' outage notices) answer no turn: their `reply_to` is the ticket id or the outage
id they are about, which can never equal a turn's episode id, so a client waiting for the answer
to its turn is never handed one of them by mistake.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from ..desk import existing_episodes
from ..episodes import iter_batches
from ..models import EpisodeInput
from ..streams import ReplyWritten
from .deps import Deps

log = logging.getLogger("relay_graph.agents")

MAX_TEXT = 8_000


@dataclass(frozen=True)
class ReplyDraft:
    id: str
    session: str
    customer: str
    text: str
    reply_to: str
    version: int
    at: datetime
    ticket_id: str | None = None
    how_i_know: list[str] = field(default_factory=list)


def after(at: datetime, earlier: datetime | None) -> datetime:
    """A reply never predates what it answers, even with skewed clocks."""
    if earlier is not None and at <= earlier:
        return earlier + timedelta(milliseconds=1)
    return at


def reply_episode(deps: Deps, d: ReplyDraft) -> EpisodeInput:
    text = d.text if len(d.text) <= MAX_TEXT else d.text[: MAX_TEXT - 1] + "…"
    return EpisodeInput(
        session=d.session,
        speaker=deps.service,
        text=text,
        at=d.at,
        id=d.id,
        kind="AgentReply",
        agent=deps.service,
        customer=d.customer,
        reply_to=d.reply_to,
        ticket_id=d.ticket_id,
        how_i_know=list(d.how_i_know),
    )


async def publish_reply(deps: Deps, tenant: str, d: ReplyDraft) -> None:
    await deps.publisher.publish(
        ReplyWritten(
            tenant=tenant,
            id=d.id,
            version=max(0, int(d.version)),
            actor=deps.service,
            session=d.session,
            reply_to=d.reply_to,
            ticket_id=d.ticket_id,
        )
    )


async def store_replies(deps: Deps, tenant: str, drafts: list[ReplyDraft], *,
                        skip_existing: bool = True) -> list[ReplyDraft]:
    """Store the replies (those not stored yet, with skip_existing) in batches, without announcing
    them. Returns the ones written now."""
    if not drafts:
        return []
    fresh = list(drafts)
    if skip_existing:
        have = await existing_episodes(deps.client, tenant, [d.id for d in drafts])
        fresh = [d for d in drafts if d.id not in have]
    for batch in iter_batches(fresh):
        await deps.memory.write_episodes(tenant, [reply_episode(deps, d) for d in batch])
    return fresh


async def write_replies(deps: Deps, tenant: str, drafts: list[ReplyDraft], *, skip_existing: bool = True) -> list[ReplyDraft]:
    """Store the replies not stored yet (in batches) and announce each. Returns the ones written
    now; replies already in the graph are neither written nor announced again."""
    fresh = await store_replies(deps, tenant, drafts, skip_existing=skip_existing)
    for d in fresh:
        await publish_reply(deps, tenant, d)
    return fresh


async def write_reply(deps: Deps, tenant: str, draft: ReplyDraft) -> bool:
    """One reply; True if it was written now (False: it was there already)."""
    return bool(await write_replies(deps, tenant, [draft]))
