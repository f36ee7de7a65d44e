"""The one context the use cases take: `Deps`, what a process holds (built once by its bootstrap:
the gateway's and each agent's), and `Call`, a per-call view of it: who is calling (tenant, agent,
label) with the memory, the clock and the way to announce. A tool, a use case and a route take a
`Call`; an agent's handlers take the `Deps` and make a `Call` for each piece of work (`Deps.call`),
as the gateway's routes get theirs from a dependency (services/gateway/deps.CallDep).

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
import contextlib
import functools
import logging
from dataclasses import dataclass, field
from datetime import datetime, timezone
import re
from typing import Any, AsyncIterator, Awaitable, Callable, Iterable, Protocol

import redis.asyncio as aioredis

from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embeddings import Embedder
from relay_graph.runtime.errors import InvalidInput, Unavailable
from relay_graph.desk.catalogue import geo
from relay_graph.desk.llm.wording import build_writer
from relay_graph.memory.facade import Memory
from relay_graph.memory.models import AGENT_PATTERN, Matched
from relay_graph.runtime.outbox import Outbox, publish_all
from relay_graph.runtime.stages import stage
from relay_graph.runtime.streams import FactChanged, NotificationBase, Publisher, connect
from relay_graph.runtime.agents.settings import AgentSettings
from relay_graph.runtime.tenancy import validate_tenant
from relay_graph.runtime.times import utcnow

log = logging.getLogger("relay_graph.runtime.agents")

Clock = Callable[[], datetime]


utc_clock = utcnow  # the clock every process runs on unless a test gives its own


_AGENT = re.compile(AGENT_PATTERN)
NOTIFY_CHUNK = 1_000
# best-effort notifications a flush puts in the owed's outbox write (more go in their own writes)
RIDE_ALONG = 32


class Announcer(Protocol):
    """Where a call's notifications go: the process's outbox (relay_graph.runtime.outbox.Outbox: kept
    in the graph, then published), or a test's collector."""

    async def announce(self, tenant: str, notifications: list[NotificationBase]) -> bool: ...


@dataclass
class Call:
    """One call's view of the process: the tenant and the agent it acts as, the memory (the graph
    client and the embedding model, loaded on first need), the clock, and what the call owes.

    A use case writes, then records on its Call the notifications it owes (`owe`); it never
    announces. The one who made the Call flushes them once the work is done (`flush`): the gateway's
    route dependency (services/gateway/deps.get_call), an agent's unit of work (`Deps.work`), the
    tool catalogue's `call_tool`. `announcer` is where they go: the process's outbox (kept in the
    graph, then published), a test's collector, or None (nobody is told: offline use; they stay in
    `owed` for a test to read)."""

    memory: Memory
    tenant: str
    agent: str
    announcer: Announcer | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    label: str | None = None  # a sub-label under `agent` (the facts' `label`), never a writer of its own
    # names a read was answered for that were not the ones asked (`tools.resolve.Resolver`), for the envelope
    matched: list[Matched] = field(default_factory=list)
    clock: Clock = utc_clock
    owed: list[NotificationBase] = field(default_factory=list)  # to flush; flush raises if they cannot be kept
    told: list[NotificationBase] = field(default_factory=list)  # to flush, best effort: their write stands anyway
    kept: list[NotificationBase] = field(default_factory=list)  # kept by their own write (a turn's): publish only
    # relay_graph.desk.llm.wording.ReplyWriter the process words replies with (usecases.replies); None: templates.
    # On the call so every reply, whichever entry point writes it, is worded the same way.
    writer: Any = None

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

    def owe(self, *notifications: NotificationBase, best_effort: bool = False) -> None:
        """Record what a write owes, to go out when the call is flushed. `best_effort`: a failure to
        announce them is logged, not raised (the write stands and the desk re-reads the graph)."""
        (self.told if best_effort else self.owed).extend(notifications)

    def owe_kept(self, notification: NotificationBase) -> None:
        """An announcement its own write kept in the outbox (a chat turn's): flushing publishes it."""
        self.kept.append(notification)

    async def flush(self) -> bool:
        """Announce what this call owes, once: the owed through the outbox (raises when they could not
        be kept: the request or delivery fails and is tried again) and the best-effort ones (a
        failure to announce them is logged), then the kept ones published. A few best-effort ones
        ride in the owed's outbox write; if that write fails, the owed are kept alone, then the
        best-effort ones, as if they had never been together. True: all are on their streams."""
        owed, told, kept = self.owed, self.told, self.kept
        self.owed, self.told, self.kept = [], [], []
        published: bool | None = None
        if owed and told and len(told) <= RIDE_ALONG:
            # an agent's turn owes its ticket and reply and tells its facts: one outbox write and
            # one pending-tenant mark for both, instead of one each
            try:
                published = await self.announce([*owed, *told])
            except Exception as exc:  # noqa: BLE001 - a best-effort one must not fail the owed
                log.warning("announcing %d owed and %d best-effort together failed (%r); each apart",
                            len(owed), len(told), exc)
        if published is None:
            published = await self.announce(owed) if owed else True
            if told:
                published = await self.notify(*told) and published
        for notification in kept:
            publish_kept = getattr(self.announcer, "publish_kept", None)
            if publish_kept is None:
                continue
            await publish_kept(self.tenant, notification)  # Unavailable: it stays kept; the relay sends it
        return published

    async def flush_quietly(self) -> None:
        """`flush` after the work failed: what was written before the failure is still announced;
        a failure to announce it is logged (the work's own error is the one that matters)."""
        try:
            await self.flush()
        except Exception as exc:  # noqa: BLE001
            log.warning("could not announce what a failed call wrote in %s: %r", self.tenant, exc)

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
    """A process's context, the one every entry point runs on (the gateway and each agent): its
    settings, the memory (graph client and embedder), the streams' Redis and publisher, the outbox
    every announcement goes through, the clock, and the agents' extractor and reply writer. Built
    by the process's bootstrap (`make_deps`, `build_deps`). `http` is what only the gateway's HTTP
    side uses (services/gateway/deps.Http: auth, limiters, limits, readiness, the live feed).

    The memory (and with it the outbox) opens on first need (`open`): an agent's bootstrap opens it
    at once, the gateway when a request needs it, so the gateway starts and answers /healthz while
    FalkorDB is down."""

    service: str
    settings: Any  # the process's one settings model (runtime.agents.AgentSettings, the gateway's)
    redis: aioredis.Redis  # bytes client for the streams and heartbeats
    publisher: Any  # runtime.streams.Publisher, or BrokerPublisher (the gateway's FastStream broker)
    memory: Memory | None = None  # None until `open`
    clock: Clock = utc_clock
    extractor: Any = None  # relay_graph.desk.extraction.port.Extractor, for agents that read text
    consumer_name: str = ""  # this replica's consumer name (the replica id in claims)
    # relay_graph.desk.llm.wording.ReplyWriter: words replies (agents/replies.honest_words); None = templates
    writer: Any = None
    outbox: Outbox | None = None  # every announcement goes through it; built with the memory
    http: Any = None  # the gateway's HTTP-only part; None in an agent
    embedder: Embedder | None = None  # for the memory `open` builds
    _owned: list[Callable[[], Awaitable[None]]] = field(default_factory=list, repr=False)
    _opened: bool = field(default=False, repr=False)  # the memory is ours (built by `open`)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)

    def __post_init__(self) -> None:
        if self.memory is not None:
            self._with(self.memory)

    def _with(self, memory: Memory) -> None:
        self.memory = memory
        if self.outbox is None or self.outbox.client is not memory.client:
            self.outbox = Outbox(memory.client, self.redis, functools.partial(publish_all, self.publisher),
                                 enabled=getattr(self.settings, "outbox", True))

    @property
    def client(self) -> GraphClient:
        if self.memory is None:
            raise Unavailable(f"{self.service} has not opened FalkorDB yet; retry shortly")
        return self.memory.client

    async def open(self) -> Memory:
        """The memory, opened on first need (one client however many ask at once). Unavailable
        while FalkorDB does not answer; the next call tries again."""
        if self.memory is None:
            async with self._lock:
                if self.memory is None:
                    settings = self.settings
                    try:
                        # Building the FalkorDB client does a blocking round trip; keep it off the event loop.
                        client = await asyncio.to_thread(GraphClient, settings)
                    except Exception as exc:  # refused, unreachable, loading, bad password ...
                        raise Unavailable(f"FalkorDB at {settings.falkordb_host}:{settings.falkordb_port} "
                                          "is not answering; retry shortly") from exc
                    self._opened = True
                    self._with(Memory(client, self.embedder))
        assert self.memory is not None
        return self.memory

    def now(self) -> datetime:
        at = self.clock()
        return at if at.tzinfo else at.replace(tzinfo=timezone.utc)

    def call(self, tenant: str, agent: str | None = None, *, label: str | None = None) -> Call:
        """This process's view for one piece of work in `tenant`, as `agent` (default: the service).
        The memory must be open (an agent's always is; the gateway's dependency opens it)."""
        if self.memory is None:
            raise Unavailable(f"{self.service} has not opened FalkorDB yet; retry shortly")
        return Call(self.memory, tenant, agent or self.service, self.outbox, label=label, clock=self.now,
                    writer=self.writer)

    @contextlib.asynccontextmanager
    async def work(self, tenant: str, agent: str | None = None, *, label: str | None = None) -> AsyncIterator[Call]:
        """An agent's unit of work in `tenant`: the Call its use cases run on, flushed when the work
        ends (what it owes announced after its writes; after a failure too, then the error goes on)."""
        call = self.call(tenant, agent, label=label)
        try:
            yield call
        except BaseException:
            await call.flush_quietly()
            raise
        with stage("call.flush"):
            await call.flush()

    async def relay_loop(self, stop: asyncio.Event, *, every_s: float = 1.0, older_than_s: float = 2.0) -> None:
        """The outbox relay every replica runs (relay_graph.runtime.outbox), once the memory opens."""
        while not stop.is_set():
            try:
                await self.open()
            except Exception as exc:  # noqa: BLE001 - FalkorDB not there yet: try again
                log.debug("outbox relay waiting for FalkorDB: %s", exc)
                try:
                    await asyncio.wait_for(stop.wait(), every_s)
                except asyncio.TimeoutError:
                    pass
                continue
            assert self.outbox is not None
            await self.outbox.relay_loop(stop, every_s=every_s, older_than_s=older_than_s)

    def owns(self, closer: Callable[[], Awaitable[None]]) -> None:
        """`closer` runs on `aclose`, before what was registered earlier."""
        self._owned.append(closer)

    async def aclose(self) -> None:
        """Close what the bootstrap and `open` opened (not what the caller passed in)."""
        owned, self._owned = self._owned, []
        if self._opened and self.memory is not None:
            owned.append(self.memory.client.close)
        while owned:
            closer = owned.pop()
            try:
                await closer()
            except Exception as exc:  # closing must go on for the rest
                log.warning("closing %s: %r", self.service, exc)
        if self._opened:  # opened again on next need
            self.memory, self.outbox, self._opened = None, None, False


def make_deps(
    service: str,
    settings: Any,
    *,
    client: GraphClient | None = None,
    memory: Memory | None = None,
    embedder: Embedder | None = None,
    redis: aioredis.Redis | None = None,
    publisher: Any = None,
    clock: Clock | None = None,
    extractor: Any = None,
    consumer_name: str = "",
    writer: Any = None,
) -> Deps:
    """A process's context, without connecting to anything (its memory opens on first need, unless
    `client` or `memory` is given). Anything passed in is used as is and left open on `aclose()`;
    anything built here is closed by it."""
    owned: list[Callable[[], Awaitable[None]]] = []
    if memory is None and client is not None:
        memory = Memory(client, embedder)
    if redis is None:
        redis = connect(settings)  # building the client does not connect; it connects on use
        owned.append(redis.aclose)
    if publisher is None:
        publisher = Publisher(redis, settings=getattr(settings, "streams", None))
    if writer is None:
        # templates without GROQ_API_KEY (nothing calls Groq), Groq behind the honest-reply check with one
        writer = build_writer(settings)
        closer = getattr(writer, "aclose", None)
        if closer is not None:
            owned.append(closer)
    return Deps(service=service, settings=settings, redis=redis, publisher=publisher, memory=memory,
                clock=clock or utc_clock, extractor=extractor, consumer_name=consumer_name, writer=writer,
                embedder=embedder, _owned=owned)


async def build_deps(service: str, settings: AgentSettings, *, preload_model: bool | None = None,
                     **parts: Any) -> Deps:
    """An agent's context (`make_deps`), its memory opened now (Unavailable when FalkorDB does not
    answer), the desk's gazetteer read and the embedding model loaded unless the settings say not to.
    The gazetteer (places and their time zones, read on a customer's first turn or ticket step) takes
    seconds to build: built here, off the event loop, it never stalls a handler long enough for the
    replica's heartbeat to lapse and another replica to take its tickets over."""
    deps = make_deps(service, settings, **parts)
    try:
        memory = await deps.open()
        await asyncio.to_thread(geo.warm)
        if (preload_model if preload_model is not None else settings.preload_model) and memory.embedder is None:
            memory.embedder = await asyncio.to_thread(
                Embedder, settings.model_dir, batch_size=settings.embed_batch_size,
                cache_size=settings.embed_cache_size, threads=settings.embed_threads,
            )
    except BaseException:
        await deps.aclose()
        raise
    return deps


async def announce(deps: Deps | Call, *notifications: NotificationBase) -> bool:
    """The one way a handler announces what it wrote (all of one tenant): kept in the graph, then
    published (relay_graph.runtime.outbox). False: the streams refused them now; they are kept and the
    outbox relay of some replica publishes them, so the handler carries on. Raises only when they
    could not be kept (FalkorDB not answering): the delivery fails and is handled again."""
    if not notifications:
        return True
    if isinstance(deps, Call):
        return await deps.announce(notifications)
    assert deps.outbox is not None, "announce on a Deps whose memory is open"
    return await deps.outbox.announce(notifications[0].tenant, list(notifications))


def fact_changes(tenant: str, actor: str, written: Any = (), retired: Any = ()) -> list[NotificationBase]:
    """FactChanged for what a write did to facts: each result of `write_facts` (its outcome is the
    change) and each fact id `retire_fact` ended. Facts are not versioned: version 0."""
    return ([FactChanged(tenant=tenant, id=r.fact_id, version=0, change=r.outcome.value, actor=actor) for r in written]
            + [FactChanged(tenant=tenant, id=fid, version=0, change="retired", actor=actor) for fid in retired])
