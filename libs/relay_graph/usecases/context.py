"""The one context the use cases take: `Deps`, what a process holds (built once by an agent's
bootstrap), and `Call`, a per-call view of it: who is calling (tenant, agent, label) with the
memory, the clock and the way to announce. A tool, a use case and a route take a `Call`; an
agent's handlers take the `Deps` and make a `Call` for each piece of work (`Deps.call`).

Handlers are plain `async def handler(deps, notification[, delivery])` functions; everything they
touch outside their arguments is in `Deps`, so a test builds one against the real FalkorDB (with
its own clock, extractor or publisher) and calls handlers directly, without a broker loop.

A tool never takes the tenant or the caller's identity from its arguments: both come from the
`Call` its transport built (the gateway from the API key, `relay mcp` from its flag, an agent from
its own settings). The agent name is what the graph records as the writer of a fact (asserted_by,
WRITTEN_BY) and the reader of one (CONSULTED).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from dataclasses import dataclass, field
from datetime import datetime, timezone
import re
from typing import Any, Awaitable, Callable, Iterable, Protocol

import redis.asyncio as aioredis

from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embeddings import Embedder
from relay_graph.runtime.errors import InvalidInput, Unavailable
from relay_graph.desk.llm.wording import build_writer
from relay_graph.memory.facade import Memory
from relay_graph.memory.models import AGENT_PATTERN, Matched
from relay_graph.runtime.outbox import Outbox, publish_all
from relay_graph.runtime.streams import FactChanged, NotificationBase, Publisher, connect
from relay_graph.runtime.agents.settings import AgentSettings
from relay_graph.runtime.tenancy import validate_tenant
from relay_graph.runtime.times import utcnow

log = logging.getLogger("relay_graph.runtime.agents")

Clock = Callable[[], datetime]


utc_clock = utcnow  # the clock every process runs on unless a test gives its own


_AGENT = re.compile(AGENT_PATTERN)
NOTIFY_CHUNK = 1_000


class Announcer(Protocol):
    """Where a call's notifications go: the outbox (relay_graph.runtime.outbox.Outbox) or what wraps
    it (the gateway's Bus): kept in the graph, then published."""

    async def announce(self, tenant: str, notifications: list[NotificationBase]) -> bool: ...


@dataclass
class Call:
    """One call's view of the process: the tenant and the agent it acts as, the memory (the graph
    client and the embedding model, loaded on first need), the clock, and `announcer`, where the
    notifications a use case returns go (None: nobody is told: tests, offline use)."""

    memory: Memory
    tenant: str
    agent: str
    announcer: Announcer | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    label: str | None = None  # a sub-label under `agent` (the facts' `label`), never a writer of its own
    # names a read was answered for that were not the ones asked (`tools.resolve.Resolver`), for the envelope
    matched: list[Matched] = field(default_factory=list)
    clock: Clock = utc_clock

    def __post_init__(self) -> None:
        self.tenant = validate_tenant(self.tenant)
        if not isinstance(self.agent, str) or not _AGENT.fullmatch(self.agent):
            raise InvalidInput(f"agent must match {AGENT_PATTERN}")

    @classmethod
    def of(cls, client: GraphClient, tenant: str, agent: str, *, embedder: Embedder | None = None,
           announcer: Announcer | None = None) -> "Call":
        return cls(Memory(client, embedder), tenant, agent, announcer)

    @property
    def client(self) -> GraphClient:
        return self.memory.client

    def now(self) -> datetime:
        at = self.clock()
        return at if at.tzinfo else at.replace(tzinfo=timezone.utc)

    async def announce(self, notifications: Iterable[NotificationBase]) -> bool:
        """Announce what a use case wrote (all of this call's tenant), through the outbox. Raises
        when they could not be kept: the caller's delivery (or request) fails and is tried again."""
        notes = list(notifications)
        if not notes or self.announcer is None:
            return not notes
        return await self.announcer.announce(self.tenant, notes)

    async def notify(self, *notifications: NotificationBase) -> bool:
        """`announce` for a write that already stands: a failure to announce is logged, not raised
        (the desk's agents re-read the graph on their next event). One outbox write and one
        pipelined round trip per NOTIFY_CHUNK (a batch write's facts). True: all are published."""
        if self.announcer is None or not notifications:
            return False
        published = True
        for start in range(0, len(notifications), NOTIFY_CHUNK):
            chunk = notifications[start : start + NOTIFY_CHUNK]
            try:
                published = await self.announce(chunk) and published
            except Exception as exc:  # noqa: BLE001
                log.warning("could not announce %d %s (first %s): %s", len(chunk), type(chunk[0]).__name__,
                            chunk[0].id, exc)
                published = False
        return published


@dataclass
class Deps:
    service: str
    settings: AgentSettings
    client: GraphClient
    memory: Memory
    redis: aioredis.Redis  # bytes client for the streams and heartbeats
    publisher: Publisher
    clock: Clock = utc_clock
    extractor: Any = None  # relay_graph.desk.extraction.port.Extractor, for agents that read text
    consumer_name: str = ""  # this replica's consumer name (the replica id in claims)
    # relay_graph.desk.llm.wording.ReplyWriter: words replies (agents/replies.honest_words); None = templates
    writer: Any = None
    outbox: Outbox | None = None  # every announcement goes through it (announce below); built from the rest
    _owned: list[Callable[[], Awaitable[None]]] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        if self.outbox is None:
            self.outbox = Outbox(self.client, self.redis, functools.partial(publish_all, self.publisher),
                                 enabled=getattr(self.settings, "outbox", True))

    def now(self) -> datetime:
        at = self.clock()
        return at if at.tzinfo else at.replace(tzinfo=timezone.utc)

    def call(self, tenant: str, agent: str | None = None, *, label: str | None = None) -> Call:
        """This process's view for one piece of work in `tenant`, as `agent` (default: the service)."""
        return Call(self.memory, tenant, agent or self.service, self.outbox, label=label, clock=self.now)

    async def aclose(self) -> None:
        """Close what bootstrap opened (not what the caller passed in)."""
        while self._owned:
            closer = self._owned.pop()
            try:
                await closer()
            except Exception as exc:  # closing must go on for the rest
                log.warning("closing %s: %r", self.service, exc)


async def build_deps(
    service: str,
    settings: AgentSettings,
    *,
    client: GraphClient | None = None,
    memory: Memory | None = None,
    embedder: Embedder | None = None,
    redis: aioredis.Redis | None = None,
    publisher: Publisher | None = None,
    clock: Clock | None = None,
    extractor: Any = None,
    consumer_name: str = "",
    preload_model: bool | None = None,
    writer: Any = None,
) -> Deps:
    """The composition root shared by the three agents. Anything passed in is used as is and left
    open on `aclose()`; anything built here is closed by it."""
    owned: list[Callable[[], Awaitable[None]]] = []
    if client is None and memory is None:
        try:
            # Building the FalkorDB client does a blocking round trip; keep it off the event loop.
            client = await asyncio.to_thread(GraphClient, settings)
        except Exception as exc:
            raise Unavailable(
                f"FalkorDB at {settings.falkordb_host}:{settings.falkordb_port} is not answering"
            ) from exc
        owned.append(client.close)
    if memory is None:
        memory = Memory(client, embedder)
    client = memory.client
    if redis is None:
        redis = connect(settings)
        owned.append(redis.aclose)
    if publisher is None:
        publisher = Publisher(redis, settings=settings.streams)
    if preload_model if preload_model is not None else settings.preload_model:
        if memory.embedder is None:
            memory.embedder = await asyncio.to_thread(
                Embedder, settings.model_dir, batch_size=settings.embed_batch_size,
                cache_size=settings.embed_cache_size, threads=settings.embed_threads,
            )
    if writer is None:
        # templates without GROQ_API_KEY (nothing calls Groq), Groq behind the honest-reply check with one
        writer = build_writer(settings)
        closer = getattr(writer, "aclose", None)
        if closer is not None:
            owned.append(closer)
    return Deps(
        service=service,
        settings=settings,
        client=client,
        memory=memory,
        redis=redis,
        publisher=publisher,
        clock=clock or utc_clock,
        extractor=extractor,
        consumer_name=consumer_name,
        writer=writer,
        _owned=owned,
    )


async def announce(deps: Deps | Call, *notifications: NotificationBase) -> bool:
    """The one way a handler announces what it wrote (all of one tenant): kept in the graph, then
    published (relay_graph.runtime.outbox). False: the streams refused them now; they are kept and the
    outbox relay of some replica publishes them, so the handler carries on. Raises only when they
    could not be kept (FalkorDB not answering): the delivery fails and is handled again."""
    if not notifications:
        return True
    if isinstance(deps, Call):
        return await deps.announce(notifications)
    return await deps.outbox.announce(notifications[0].tenant, list(notifications))


def fact_changes(tenant: str, actor: str, written: Any = (), retired: Any = ()) -> list[NotificationBase]:
    """FactChanged for what a write did to facts: each result of `write_facts` (its outcome is the
    change) and each fact id `retire_fact` ended. Facts are not versioned: version 0."""
    return ([FactChanged(tenant=tenant, id=r.fact_id, version=0, change=r.outcome.value, actor=actor) for r in written]
            + [FactChanged(tenant=tenant, id=fid, version=0, change="retired", actor=actor) for fid in retired])
