"""Who is calling a tool, in which tenant, with which connection.

A tool never takes the tenant or the caller's identity from its arguments: both come from the
context its transport built (the gateway from the API key, `relay mcp` from its flag, an agent from
its own settings). The agent name is what the graph records as the writer of a fact (asserted_by,
WRITTEN_BY) and the reader of one (CONSULTED)."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embeddings import Embedder
from relay_graph.runtime.errors import InvalidInput
from relay_graph.memory.facade import Memory
from relay_graph.memory.models import AGENT_PATTERN, Matched
from relay_graph.runtime.streams import NotificationBase
from relay_graph.runtime.tenancy import validate_tenant

log = logging.getLogger("relay.tools")

_AGENT = re.compile(AGENT_PATTERN)
MCP_PREFIX = "mcp:"
_UNSAFE = re.compile(r"[^a-z0-9_.@-]+")

Announce = Callable[[NotificationBase], Awaitable[Any]]


def mcp_agent_name(client_name: str | None, configured: str | None = None) -> str:
    """The agent an outside MCP client writes and reads as: `mcp:<name>`, from a configured name if
    there is one, else the client's own name from the MCP initialize `clientInfo`. Lowercased, runs
    of anything but letters, digits and `_.@-` become one dash, at most 64 characters in all. Always
    under the `mcp:` prefix, so an outside agent can never pass for one of the desk's agents (and
    borrow its trust)."""
    for raw in (configured, client_name):
        if not raw:
            continue
        name = _UNSAFE.sub("-", raw.strip().lower()).strip("-._@")
        name = name[: 64 - len(MCP_PREFIX)].rstrip("-._@")
        if name:
            return MCP_PREFIX + name
    return MCP_PREFIX + "client"


@dataclass
class ToolContext:
    """What a tool runs with. `memory` carries the graph client and the embedding model (loaded on
    first need: only remember, recall and ask use it). `announce` publishes a change notification
    (facts written, tickets handed off) on the streams; None: nobody is told (tests, offline use)."""

    memory: Memory
    tenant: str
    agent: str
    announce: Announce | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    label: str | None = None  # a sub-label under `agent` (the facts' `label`), never a writer of its own
    # names a read was answered for that were not the ones asked (`Resolver`), for the envelope
    matched: list[Matched] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.tenant = validate_tenant(self.tenant)
        if not isinstance(self.agent, str) or not _AGENT.fullmatch(self.agent):
            raise InvalidInput(f"agent must match {AGENT_PATTERN}")

    @classmethod
    def of(cls, client: GraphClient, tenant: str, agent: str, *, embedder: Embedder | None = None,
           announce: Announce | None = None) -> "ToolContext":
        return cls(Memory(client, embedder), tenant, agent, announce)

    @property
    def client(self) -> GraphClient:
        return self.memory.client

    async def notify(self, notification: NotificationBase) -> bool:
        """Announce a change that was already written. A failure to announce is logged, not
        raised: the write stands, and the desk's agents re-read the graph on their next event."""
        if self.announce is None:
            return False
        try:
            await self.announce(notification)
            return True
        except Exception as exc:  # noqa: BLE001
            log.warning("could not announce %s %s: %s", type(notification).__name__, notification.id, exc)
            return False
