"""Reading episodes back as they were written: one session's turns, or those of every session whose
id starts with a prefix, in order of arrival, a page at a time.

Recall answers a question; this answers "what was said here, in order" (a transcript), which a
client needs to rebuild state it keeps as turns: a LangGraph store keeps each version of an item as
a turn of its namespace's session (clients/python/relay_client/langgraph.py). Episodes never change,
so a page is exactly what was on file, and each carries both clocks: `at` (when it was said) and
`recorded_at` (when Relay learnt it)."""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime

from pydantic import BaseModel, Field

from relay_graph.memory import inputs
from relay_graph.memory.queries import episodes as q
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import InvalidInput
from relay_graph.runtime.tenancy import validate_tenant
from relay_graph.runtime.times import from_ms

MAX_PAGE = 1_000
CURSOR_PATTERN = r"^[A-Za-z0-9_-]{1,800}$"


class EpisodeView(BaseModel):
    episode_id: str
    session: str
    speaker: str
    text: str
    kind: str
    at: datetime = Field(description="when it was said (the world's clock)")
    recorded_at: datetime | None = Field(description="when Relay learnt it (the belief clock)")
    agent: str | None = Field(description="who wrote it down: the writing key's agent")


class EpisodeList(BaseModel):
    episodes: list[EpisodeView]
    next: str | None = Field(description="pass as `after` for the next page; null on the last page")


def _cursor(row: dict) -> str:
    raw = json.dumps([row["session"], int(row["pos"]), row["id"]], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _after(cursor: str | None) -> tuple[str, int, str]:
    """Where a page starts: after the (session, pos, episode id) a previous page ended on."""
    if cursor is None:
        return "", -1, ""  # every session id is longer than "", every pos at least 0
    try:
        session, pos, eid = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if not (isinstance(session, str) and isinstance(pos, int) and isinstance(eid, str)):
            raise ValueError
    except (ValueError, TypeError, binascii.Error):
        raise InvalidInput("after: not a cursor this API gave (pass the `next` of the previous page)",
                           code="invalid_cursor") from None
    return session, pos, eid


async def list_episodes(client: GraphClient, tenant: str, *, session: str | None = None,
                        session_prefix: str | None = None, after: str | None = None,
                        limit: int = 100) -> EpisodeList:
    """The episodes of `session` and/or of every session whose id starts with `session_prefix` (both:
    the session, if its id starts with the prefix; neither: every session), ordered by session id
    and then by arrival; `after`: the previous page's `next`."""
    tenant = validate_tenant(tenant)
    if session is not None:
        session = inputs.check_identifier(session, "session")
    if session_prefix is not None:
        session_prefix = inputs.check_identifier(session_prefix, "session_prefix")
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidInput(f"limit: 1 to {MAX_PAGE}")
    after_session, after_pos, after_id = _after(after)
    if session is not None and not session.startswith(session_prefix or ""):
        return EpisodeList(episodes=[], next=None)
    params = {"session": session, "prefix": session_prefix or "", "after_session": after_session,
              "after_pos": after_pos, "after_id": after_id, "limit": limit + 1}
    rows = await client.run(tenant, q.LIST_IN_SESSION if session is not None else q.LIST_UNDER_PREFIX, params)
    page = rows[:limit]
    episodes = [EpisodeView(episode_id=r["id"], session=r["session"], speaker=r["speaker"], text=r["text"],
                            kind=r["kind"] or "Message", at=from_ms(r["at_ms"]), recorded_at=from_ms(r["recorded_at_ms"]),
                            agent=r["agent"]) for r in page]
    return EpisodeList(episodes=episodes, next=_cursor(page[-1]) if len(rows) > limit else None)
