"""The one reply that is never stored: the desk's last words to a customer whose data it has just
erased on their request. It must reach them (the chat waiting for it, their live channel) yet
leave nothing behind, so it is kept for a few minutes only, under a key of its tenant that expires
by itself (and goes with a tenant's deletion), instead of as an episode in the graph."""

from __future__ import annotations

import json
from datetime import datetime

from relay_graph.runtime import tenant_data
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.tenancy import validate_tenant

KEEP_S = 300  # long enough for the chat that waits for it, and a reload of the page


def key(tenant: str, reply_id: str) -> str:
    return f"relay:farewell:{validate_tenant(tenant)}:{reply_id}"


tenant_data.declare(tenant_data.Keys("farewell replies", lambda tenant: f"relay:farewell:{tenant}:*"))


async def keep(client: GraphClient, tenant: str, reply_id: str, *, text: str, session: str, reply_to: str,
               at: datetime, answers: list[str]) -> None:
    body = {"text": text, "session": session, "reply_to": reply_to, "at": at.isoformat(), "answers": answers}
    await client.redis.set(key(tenant, reply_id), json.dumps(body), ex=KEEP_S)


async def read(client: GraphClient, tenant: str, reply_id: str) -> dict | None:
    raw = await client.redis.get(key(tenant, reply_id))
    return json.loads(raw) if raw else None
