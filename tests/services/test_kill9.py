"""kill -9 of each desk agent mid-ticket under a 200-turn load, through real processes
(`python -m services.<name>`, two replicas each) on the real FalkorDB and streams.

40 customers say 5 turns each (200 turns): the first is a problem, the rest are facts about them.
About ten of them are behind an OLT that is down (netops declared the outage; their tickets wait on it),
the others have Wi-Fi that keeps dropping (a fault the lab plants; the resolver measures, changes the
Wi-Fi channel and measures again). While that runs, the
intake replica holding a turn, the resolver replica owning a ticket between its fix steps and,
once the OLT is back, the netops replica holding that NetworkChanged are killed with SIGKILL.
The other replica of each takes their entries over. Afterwards: every turn has exactly one reply,
every ticket is fixed with a passing measurement after its last action, each customer has one
ticket, no fix step was done twice (a Wi-Fi ticket holds its one remedy once), and nothing was
dead-lettered."""

from __future__ import annotations

import asyncio
import os
from collections import Counter
import uuid
from pathlib import Path

import pytest

from relay_graph import lab
from relay_graph.desk.network import store as network
from relay_graph.desk.tickets import store as tickets
from relay_graph.runtime.queries import Query
from relay_graph.runtime.streams import (
    STREAM_NETWORK,
    STREAM_OUTAGES,
    STREAM_TURNS,
    STREAMS,
    NetworkChanged,
    Publisher,
    read_dead_letters,
)
from relay_graph.desk.tickets.models import TicketStage

from tests.support import wipe_stream_keys

from .conftest import Gateway, eventually, published
from .processes import Desk
from tests.markers import needs
from tests import sample_network

CUSTOMERS = 40
TURNS_EACH = 5
FOLLOW_UPS = ("My router is a TP-Link Archer C6.", "My phone number is +91 98200 1{i:04d}.",
              "My email is kill{i}@example.com.", "I live at {i} MG Road, Pune.")

REPLIES = Query(
    "test_kill9_replies",
    "MATCH (r:Episode {kind: 'AgentReply'}) WHERE r.reply_to STARTS WITH 'ep-' "
    "RETURN r.reply_to AS turn, count(r) AS n",
    read_only=True,
)
TICKETS = Query(
    "test_kill9_tickets",
    "MATCH (t:Ticket) RETURN t.ticket_id AS id, t.customer AS customer, t.stage AS stage",
    read_only=True,
)


@pytest.fixture(scope="module")
@needs("processes")
async def desk_procs(falkordb_server, graph_settings, stream_redis, tmp_path_factory):
    await wipe_stream_keys(stream_redis)
    keep = os.environ.get("RELAY_TEST_LOG_DIR")
    log_dir = Path(keep) / f"kill9-{uuid.uuid4().hex[:6]}" if keep else tmp_path_factory.mktemp("kill9-logs")
    log_dir.mkdir(parents=True, exist_ok=True)
    procs = Desk(falkordb_server.host, falkordb_server.port, graph_settings.model_dir, log_dir)
    procs.start("intake", 2)
    procs.start("resolver", 2, {"RELAY_STEP_DELAY_MS": "150"})
    procs.start("netops", 2)
    try:
        await procs.ready(stream_redis)
        yield procs
    finally:
        codes = procs.stop()
    assert set(codes.values()) <= {0}, f"unclean stop {codes}\n{procs.logs()}"


async def _holder(redis, stream: str, group: str, desk_procs: Desk, service: str):
    """A live replica of `service` with an entry of `stream` pending (being handled right now)."""
    live = {p.consumer: p for p in desk_procs.procs if p.service == service and p.popen.poll() is None}
    for row in await redis.xpending_range(stream, group, "-", "+", 50):
        consumer = row["consumer"].decode() if isinstance(row["consumer"], bytes) else row["consumer"]
        if consumer in live:
            return live[consumer]
    return None


async def _mid_fix(client, tenant, desk_procs: Desk):
    live = {p.consumer: p for p in desk_procs.procs if p.service == "resolver" and p.popen.poll() is None}
    for row in await client.run(tenant, TICKETS):
        t = await tickets.get_ticket(client, tenant, row["id"])
        steps = [e for e in t.timeline if e.event == "fix_step"]
        if t.stage is not TicketStage.FIXED and steps and t.owner_replica in live:
            return live[t.owner_replica]
    return None


async def test_kill_9_of_each_agent_mid_ticket_loses_and_duplicates_nothing(desk_procs, graph_client, memory,
                                                                            stream_redis, tenant):
    # 40 customers on lines: those behind the OLT that fails say their internet is down; the lab
    # plants a Wi-Fi fault in every other home, which the resolver measures, fixes and measures again
    wired = [f"Kill Line {i:02d}" for i in range(CUSTOMERS)]
    net = await sample_network.build_sample_network(graph_client, tenant, city="pune", customers=wired)
    olt = net.olts[0]
    behind = sorted(c.customer for c in await network.customers_behind(graph_client, tenant, olt))
    names = behind + [n for n in wired if n not in behind]
    assert 0 < len(behind) < CUSTOMERS
    for name in names[len(behind):]:
        await lab.inject(graph_client, tenant, kind=lab.FaultKind.WIFI_INTERFERENCE, customer=name)
    publisher = Publisher(stream_redis)
    change = await network.set_node_status(graph_client, tenant, olt, up=False)
    await publisher.publish(NetworkChanged(tenant=tenant, id=olt, version=change.version, change="down", actor="lab"))
    await eventually(lambda: published(stream_redis, STREAM_OUTAGES, tenant), timeout=60, what="outage declared")

    gateway = Gateway(memory, publisher, tenant)
    turns = []
    killed = {}

    async def load():
        for k in range(TURNS_EACH):
            for i, name in enumerate(names):
                if k == 0:
                    text = (f"Hi, I'm {name}. My internet is down." if name in behind
                            else f"Hi, I'm {name}. My wifi keeps dropping.")
                else:
                    text = FOLLOW_UPS[k - 1].format(i=i)
                turns.append(await gateway.say(name, text, session=f"kill9-{i}"))
                await asyncio.sleep(0.01)

    async def kill_intake():
        await eventually(lambda: len(turns) >= 60 or None, timeout=120, what="60 turns")
        victim = await eventually(lambda: _holder(stream_redis, STREAM_TURNS, "intake", desk_procs, "intake"),
                                  timeout=60, interval=0.01, what="an intake replica holding a turn")
        desk_procs.kill(victim)
        killed["intake"] = victim

    async def kill_resolver():
        victim = await eventually(lambda: _mid_fix(graph_client, tenant, desk_procs), timeout=120, interval=0.05,
                                  what="a resolver between fix steps")
        desk_procs.kill(victim)
        killed["resolver"] = victim

    await asyncio.gather(load(), kill_intake(), kill_resolver())
    assert len(turns) == CUSTOMERS * TURNS_EACH

    async def all_answered():
        rows = {r["turn"]: r["n"] for r in await graph_client.run(tenant, REPLIES)}
        return rows if all(t.id in rows for t in turns) else None

    answered = await eventually(all_answered, timeout=150, interval=0.5, what="every turn answered")
    assert all(answered[t.id] == 1 for t in turns), {t.id: answered[t.id] for t in turns if answered[t.id] != 1}

    # the OLT is back: netops moves the tickets waiting on it; its replica holding that is killed
    change = await network.set_node_status(graph_client, tenant, olt, up=True)
    await publisher.publish(NetworkChanged(tenant=tenant, id=olt, version=change.version, change="up", actor="lab"))
    victim = await eventually(lambda: _holder(stream_redis, STREAM_NETWORK, "netops", desk_procs, "netops"),
                              timeout=30, interval=0.005, what="a netops replica holding the OLT's recovery")
    desk_procs.kill(victim)
    killed["netops"] = victim
    assert {s: p.popen.returncode for s, p in killed.items()} == {"intake": -9, "resolver": -9, "netops": -9}

    async def all_fixed():
        rows = await graph_client.run(tenant, TICKETS)
        return rows if len(rows) >= CUSTOMERS and all(r["stage"] == "fixed" for r in rows) else None

    try:
        rows = await eventually(all_fixed, timeout=150, interval=0.5, what="every ticket fixed")
    except AssertionError:
        rows = await graph_client.run(tenant, TICKETS)
        stuck = [await tickets.get_ticket(graph_client, tenant, r["id"]) for r in rows if r["stage"] != "fixed"]
        raise AssertionError(f"not every ticket fixed: {len(rows)} tickets, "
                             f"{Counter((r['stage'], r['customer'] in behind) for r in rows)}; the first not fixed: "
                             + "; ".join(f"{e.agent} {e.event} {e.detail}" for e in stuck[0].timeline)) from None
    assert sorted(r["customer"] for r in rows) == sorted(names)  # one ticket per customer
    for r in rows:
        t = await tickets.get_ticket(graph_client, tenant, r["id"])
        steps = [e.detail.split(None, 1)[0].rstrip(":") for e in t.timeline if e.event == "fix_step"]
        if r["customer"] in behind:  # the resolver's own work on the line, or netops' repair: never twice
            assert len(steps) == len(set(steps)), (r, steps)
        else:  # the Wi-Fi fault's one remedy, done once, even by a replica taking over a killed one's ticket
            assert steps == ["change_wifi_channel"], (r, t.timeline)
    assert await tickets.unproven_fixes(graph_client, tenant) == {}  # each fix measured after its last action
    for stream in STREAMS:  # the module wiped the streams' keys: any dead letter is this test's
        assert await read_dead_letters(stream_redis, stream) == [], stream
