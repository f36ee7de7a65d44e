"""kill -9 of a primary while chat turns and fact writes run: the cluster promotes the dead
primary's replica and the desk carries on without a restart.

The desk here is real processes on a 3+3 cluster of the module's own: the gateway
(`python -m services.gateway`) and two intake replicas (`python -m services.intake`); the test is a
set of customers talking to the gateway over HTTP (POST /chat with `wait`, an Idempotency-Key per
turn, a 503 or a lost connection tried again with the same key) while writers in this process write
facts through `Memory` on the same cluster. The primary killed is the one owning the replies
stream and the tenant registry (slots 0-5460), with a third of the tenants on it.

What must hold: every turn is answered (its reply is in the graph), every acknowledged fact is on
file after the promotion, the processes that were started are the ones still running (nothing
restarted) and the gateway is ready again on its own. Printed: the time to recover, from the kill
to the first turn begun after it that was answered, and to the first fact write begun after it on
the dead shard that was acknowledged."""

from __future__ import annotations

import asyncio
import time
import uuid

import httpx
import pytest
from redis.crc import key_slot

import relay_graph.desk.vocabulary  # noqa: F401 (the desk's predicates: the failover writes lives_in)
from relay_graph.memory.facade import Memory
from relay_graph.memory.models import FactInput
from relay_graph.runtime import cluster
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embedded import free_port
from relay_graph.runtime.queries import Query
from relay_graph.runtime.tenancy import graph_name
from tests import reads, support
from tests.cluster.conftest import settings_for
from tests.markers import needs
from tests.services.processes import Desk

FACT_IDS = Query("test_failover_fact_ids", "MATCH (f:Fact) RETURN f.fact_id AS id", read_only=True)
WRITES, WRITERS = 2000, 4
CONVERSATIONS, TURNS_EACH, TALKERS = 40, 5, 8  # 200 turns, 8 conversations at a time
TURNS = CONVERSATIONS * TURNS_EACH
ADMIN = "failover-test-admin-key"
WAIT_S = 30  # POST /chat?wait=: the longest the gateway holds a turn for its reply
LINES = ("Hi, I'm {name}. I live in Oslo.", "What plans do you have?", "I moved to Bergen last week.",
         "Do you have fibre in my area?", "Thanks, that is all.")
FIRST = ("Asha", "Bjorn", "Carla", "Dev", "Elin", "Farid", "Greta", "Hugo")
LAST = ("Rao", "Berg", "Lind", "Moreau", "Okafor")


def person(i: int) -> str:
    return f"{FIRST[i % len(FIRST)]} {LAST[i // len(FIRST) % len(LAST)]}"


@pytest.fixture(scope="module")
@needs("cluster", "falkordb", "processes")
def doomed_cluster(tmp_path_factory):
    """A 3+3 cluster of its own: this module kills one of its primaries."""
    c = support.start_cluster(tmp_path_factory.mktemp("failover"), 3, 1)
    yield c
    c.stop()


@pytest.fixture(scope="module")
def desk(doomed_cluster, tmp_path_factory):
    """The gateway and two intake replicas on the cluster, each its own process and log."""
    settings = settings_for(doomed_cluster)
    procs = Desk("127.0.0.1", doomed_cluster.nodes[0].port, settings.model_dir,
                 tmp_path_factory.mktemp("failover-logs"), cluster=doomed_cluster.seeds)
    port = free_port()
    procs.url = f"http://127.0.0.1:{port}"
    procs.start("intake", 2)
    procs.start("gateway", 1, {"RELAY_PORT": str(port), "RELAY_ADMIN_KEY": ADMIN, "RELAY_LOG_LEVEL": "warning",
                               "RELAY_READY_AGENTS": '["intake"]'})
    try:
        yield procs
    finally:
        codes = procs.stop()
    assert set(codes.values()) <= {0}, f"unclean stop {codes}\n{procs.logs()}"


async def _ready(http: httpx.AsyncClient, desk: Desk, timeout: float) -> float:
    """Until /readyz says 200 (FalkorDB, the streams and the intake group answer); when it did."""
    async def ready() -> bool:
        for p in desk.procs:
            assert p.popen.poll() is None, f"{p.service}-{p.replica} exited:\n{desk.logs()}"
        try:
            return (await http.get("/readyz", timeout=2)).status_code == 200
        except httpx.HTTPError:
            return False

    await support.eventually(ready, timeout=timeout, interval=0.2, what="the gateway ready")
    return time.monotonic()


def _tenants_on_every_shard(c, per_shard: int = 2) -> tuple[list[str], dict[str, int]]:
    """Tenant ids, `per_shard` on each primary, and the port of the primary each lives on."""
    ranges = {(lo, hi): node.port for (lo, hi), node in zip(cluster.slot_ranges(3), c.nodes[:3])}
    owner, chosen = {}, {port: [] for port in ranges.values()}
    while any(len(v) < per_shard for v in chosen.values()):
        t = "fo-" + uuid.uuid4().hex[:8]
        slot = key_slot(graph_name(t).encode())
        port = next(p for (lo, hi), p in ranges.items() if lo <= slot <= hi)
        if len(chosen[port]) < per_shard:
            chosen[port].append(t)
            owner[t] = port
    return [t for ts in chosen.values() for t in ts], owner


async def _turn(http: httpx.AsyncClient, tenant: str, key: str, body: dict,
                retries: list[tuple[float, str]]) -> httpx.Response:
    """POST /chat until the gateway takes the turn (200 answered, or 202 still handling): a 503
    (FalkorDB or the streams not answering yet) or a lost connection goes again with the same
    Idempotency-Key, so a turn stored before the failure is not stored twice; a 409 is that key's
    first request still in flight."""
    headers = {"Authorization": f"Bearer {key}", "Idempotency-Key": uuid.uuid4().hex}
    deadline = time.monotonic() + 120
    while True:
        try:
            r = await http.post(f"/v1/tenants/{tenant}/chat", params={"wait": WAIT_S}, json=body, headers=headers,
                                timeout=WAIT_S + 30)
            if r.status_code in (200, 202):
                return r
            assert r.status_code in (503, 409), r.text
            retries.append((time.monotonic(), str(r.status_code)))
        except httpx.TransportError as exc:
            retries.append((time.monotonic(), type(exc).__name__))
        assert time.monotonic() < deadline, f"the turn was never taken: {retries[-5:]}"
        await asyncio.sleep(0.2)


async def test_a_primary_killed_under_chat_and_fact_load_is_failed_over_and_nothing_is_lost(
        doomed_cluster, desk, capsys):
    c = doomed_cluster
    victim = c.nodes[0]  # the primary of slots 0-5460: the replies stream, the tenant registry
    assert key_slot(b"relay:stream:replies") <= 5460
    tenants, owner = _tenants_on_every_shard(c)
    doomed = {t for t in tenants if owner[t] == victim.port}
    client = GraphClient(settings_for(c))
    memory = Memory(client)
    http = httpx.AsyncClient(base_url=desk.url)
    started_pids = {(p.service, p.replica): p.pid for p in desk.procs}
    await _ready(http, desk, 120)
    keys = {}
    for t in tenants:
        r = await http.post("/v1/tenants", json={"tenant": t, "world": False}, headers={"Authorization": f"Bearer {ADMIN}"})
        assert r.status_code == 201, r.text
        keys[t] = r.json()["api_key"]

    acked: dict[str, set[str]] = {t: set() for t in tenants}
    turns: list[tuple[str, str, float, int]] = []  # tenant, episode id, when begun, status
    retries: list[tuple[float, str]] = []  # when, and what a request that went again got
    readiness: list[tuple[float, int]] = []  # /readyz from the kill on: when, status
    killed_at: float | None = None
    facts_back: float | None = None  # the first write begun after the kill, on the dead shard, acknowledged
    turns_back: float | None = None  # the first turn begun after the kill that was answered

    async def writer(todo) -> None:
        nonlocal facts_back
        for n in todo:
            t = tenants[n % len(tenants)]
            begun = time.monotonic()
            result = await memory.write_fact(t, FactInput(subject=f"cust {n}", predicate="lives_in",
                                                          object="oslo", agent="api"))
            acked[t].add(result.fact_id)
            if killed_at is not None and begun > killed_at and facts_back is None and t in doomed:
                facts_back = time.monotonic()
            await asyncio.sleep(0.01)  # writes spread over the turns' run, not done before the kill

    async def talker(todo) -> None:
        nonlocal turns_back
        for i in todo:
            t = tenants[i % len(tenants)]
            customer = session = None
            for k, line in enumerate(LINES[:TURNS_EACH]):
                body = {"text": line.format(name=person(i))}
                body.update({"name": person(i)} if customer is None else {"customer": customer, "session": session})
                begun = time.monotonic()
                r = await _turn(http, t, keys[t], body, retries)
                answer = r.json()
                customer, session = answer["customer"], answer["session"]
                turns.append((t, answer["episode_id"], begun, r.status_code))
                if r.status_code == 200:
                    assert answer["reply"]["text"], answer
                    if killed_at is not None and begun > killed_at and turns_back is None:
                        turns_back = time.monotonic()

    async def killer() -> None:
        nonlocal killed_at
        await support.eventually(lambda: sum(map(len, acked.values())) >= WRITES // 3 and len(turns) >= TURNS // 3,
                                 timeout=300, interval=0.05, what="a third of the writes and of the turns")
        victim.process.kill()  # SIGKILL: no AOF flush, no goodbye to the cluster
        victim.process.wait()
        killed_at = time.monotonic()
        done_at_kill.update(writes=sum(map(len, acked.values())), turns=len(turns))
        while True:  # until ready again after it was not, or 15 s of ready throughout
            try:
                status = (await http.get("/readyz", timeout=2)).status_code
            except httpx.HTTPError:
                status = 0
            readiness.append((time.monotonic(), status))
            if status == 200 and (any(s != 200 for _, s in readiness) or time.monotonic() - killed_at > 15):
                return
            await asyncio.sleep(0.1)

    done_at_kill: dict[str, int] = {}
    facts, convs = iter(range(WRITES)), iter(range(CONVERSATIONS))
    run_started = time.monotonic()
    try:
        await asyncio.wait_for(asyncio.gather(killer(), *(writer(facts) for _ in range(WRITERS)),
                                              *(talker(convs) for _ in range(TALKERS))), 600)
        run_s = time.monotonic() - run_started
        await _ready(http, desk, 90)
        # every turn is answered: the ones the gateway gave up waiting for (202) too, in the graph
        unanswered = {(t, e) for t, e, _, _ in turns}

        async def all_answered() -> bool:
            for t, e in list(unanswered):
                if await reads.get_reply(client, t, e) is not None:
                    unanswered.discard((t, e))
            return not unanswered

        try:
            await support.eventually(all_answered, timeout=90, interval=0.5, what="every turn answered")
        except AssertionError:
            raise AssertionError(f"{len(unanswered)} of {len(turns)} turns without a reply, e.g. {sorted(unanswered)[:5]}"
                                 f"\n{desk.logs()}") from None
    finally:
        await http.aclose()
    assert killed_at is not None and turns_back is not None and facts_back is not None
    assert done_at_kill["writes"] < WRITES and done_at_kill["turns"] < TURNS, "the kill came under load"
    assert len(turns) == TURNS and len({e for _, e, _, _ in turns}) == TURNS
    # nothing restarted: the processes started are the ones running
    assert {(p.service, p.replica): p.pid for p in desk.procs if p.popen.poll() is None} == started_pids
    # the dead primary's replica took its slots over
    layout = cluster.nodes(c.addresses[1])
    promoted = [n for n in layout if n["primary"] and not n["failed"] and "0-5460" in n["slots"]]
    assert promoted and promoted[0]["port"] != victim.port
    # every write that was acknowledged is there, on every shard
    for t in tenants:
        present = {r["id"] for r in await client.run(t, FACT_IDS)}
        assert acked[t] <= present, (t, len(acked[t] - present))
    assert sum(map(len, acked.values())) == WRITES
    waited = sum(1 for *_, status in turns if status == 202)
    unready = [at for at, status in readiness if status != 200]
    ready = (f"/readyz not 200 from +{unready[0] - killed_at:.2f}s to +{readiness[-1][0] - killed_at:.2f}s"
             if unready else "/readyz 200 throughout")
    tried = {what: sum(1 for _, w in retries if w == what) for what in sorted({w for _, w in retries})}
    last_retry = f", the last at +{max(at for at, _ in retries) - killed_at:.2f}s" if retries else ""
    with capsys.disabled():
        print(f"\nfailover under load: primary :{victim.port} (replies stream, tenant registry, {len(doomed)} of "
              f"{len(tenants)} tenants) killed after {done_at_kill['turns']} turns and {done_at_kill['writes']} "
              f"fact writes; recovered on its own: a turn begun after the kill answered "
              f"{turns_back - killed_at:.2f}s after it, a fact write on the dead shard acknowledged "
              f"{facts_back - killed_at:.2f}s after it, {ready}; {TURNS} turns all answered ({waited} after the "
              f"gateway's {WAIT_S}s wait ran out; requests tried again, by what they got: {tried}{last_retry}), "
              f"{WRITES} facts all acknowledged and on "
              f"file ({client.unreplicated} writes stood on a primary alone); the run took {run_s:.1f}s")
    await client.close()
