"""The three desk agents as real processes (`python -m services.<name>`) on real streams and the real
FalkorDB. The test plays the gateway's part (the customer's episode, then TurnReceived) and watches
only the graph and the streams."""

from __future__ import annotations

import json
import os
import signal
import uuid
from pathlib import Path

import pytest

from relay_graph.desk import agent_reads as desk

from relay_graph.desk.network import store as network

from relay_graph.desk.tickets import store as tickets
from relay_graph import lab
from relay_graph.runtime.errors import NotFound
from relay_graph.runtime.streams import (
    STREAM_OUTAGES,
    STREAM_REPLIES,
    STREAM_TICKETS,
    STREAM_TURNS,
    NetworkChanged,
    Publisher,
    TicketChanged,
    read_dead_letters,
    stream_groups,
)
from relay_graph.runtime.queries import Query
from relay_graph.runtime.streams.wire import text_fields
from relay_graph.desk.tickets.models import TicketStage

from tests.support import wipe_stream_keys

from .conftest import counts, eventually, published
from .processes import Desk
from tests.markers import needs
from tests import reads, sample_network

STEP_DELAY_MS = 300  # long enough to kill a resolver in the middle of a ticket


async def on_a_line(graph_client, tenant: str, customer: str, fault: lab.FaultKind) -> None:
    """The customer on a line with a fault the lab plants (the resolver measures, never guesses)."""
    await sample_network.build_sample_network(graph_client, tenant, city="pune", customers=[customer])
    await lab.inject(graph_client, tenant, kind=fault, customer=customer)


def lab_steps(ticket) -> list[str]:
    return [e.detail.split(None, 1)[0].rstrip(":") for e in ticket.timeline if e.event == "fix_step"]


@pytest.fixture(autouse=True)
async def no_unproven_fix(graph_client, tenant):
    yield
    assert await tickets.unproven_fixes(graph_client, tenant) == {}


@pytest.fixture(scope="module")
@needs("processes")
async def desk_procs(falkordb_server, graph_settings, stream_redis, tmp_path_factory):
    await wipe_stream_keys(stream_redis)
    # RELAY_TEST_LOG_DIR keeps the processes' logs where pytest's temp clean-up does not reach
    keep = os.environ.get("RELAY_TEST_LOG_DIR")
    log_dir = Path(keep) / f"desk-{uuid.uuid4().hex[:6]}" if keep else tmp_path_factory.mktemp("desk-logs")
    log_dir.mkdir(parents=True, exist_ok=True)
    procs = Desk(falkordb_server.host, falkordb_server.port, graph_settings.model_dir, log_dir,
                 cluster=graph_settings.falkordb_cluster, users=getattr(falkordb_server, "acl_users", {}))
    procs.start("intake", 3)
    procs.start("resolver", 2, {"RELAY_STEP_DELAY_MS": str(STEP_DELAY_MS)})
    procs.start("netops", 1)
    try:
        await procs.ready(stream_redis)
        yield procs
    finally:
        codes = procs.stop()
    assert set(codes.values()) <= {0}, f"unclean stop {codes}\n{procs.logs()}"


async def reply_to(redis, tenant: str, turn_id: str, timeout: float = 30.0):
    found = await eventually(lambda: published(redis, STREAM_REPLIES, tenant, reply_to=turn_id), timeout=timeout,
                             what=f"reply to {turn_id}")
    return found[0]


async def settled(redis, stream: str, group: str) -> bool:
    """Everything published on the stream was delivered to the group and acknowledged."""
    for g in await stream_groups(redis, stream):
        if g.group == group:
            return g.pending == 0 and g.lag == 0
    return False


async def test_a_turn_is_answered_and_its_problem_is_picked_up_by_the_resolver(desk_procs, gateway, graph_client,
                                                                               stream_redis, tenant):
    await on_a_line(graph_client, tenant, "Alice Rao", lab.FaultKind.ROUTER_FROZEN)
    turn = await gateway.say("Alice Rao", "Hi, I'm Alice Rao. My router is frozen, nothing works.", session="a-1")
    written = await reply_to(stream_redis, tenant, turn.episode_id)
    reply = await reads.get_turn(graph_client, tenant, written.id)
    assert reply.speaker == "intake" and reply.session == "a-1" and written.version == turn.seq
    tid = desk.ticket_id_for(turn.episode_id)
    assert written.ticket_id == tid and tid in reply.text

    async def picked_up():
        edges = await desk.ticket_agent_edges(graph_client, tenant, tid)
        return [e for e in edges if e.type == "PICKED_UP"] and edges

    edges = await eventually(picked_up, what="ticket picked up")
    assert [(e.type, e.agent) for e in edges if e.type != "OPENED"][:2] == [("HANDED_OFF", "intake"),
                                                                             ("PICKED_UP", "resolver")]
    holder = next(e.replica for e in edges if e.type == "PICKED_UP")
    assert holder in {p.consumer for p in desk_procs.procs if p.service == "resolver"}

    done = await eventually(lambda: _stage(graph_client, tenant, tid, TicketStage.FIXED), what="ticket fixed")
    assert lab_steps(done) == ["restart_ont"]  # what the readings called for, measured again after
    # The agents met only in the graph: what travelled between them is thin notifications
    # (ids, versions, changes), never text or state; the gateway's entries come in FastStream's envelope.
    for _id, fields in await stream_redis.xrange(STREAM_TICKETS):
        payload = json.loads(text_fields(fields)["payload"])
        if payload["tenant"] == tenant:
            assert set(payload) == {"tenant", "kind", "change", "id", "version", "actor", "at", "notification_id"}


async def test_a_turn_with_line_breaks_tabs_and_joined_emoji_is_answered_and_kept_as_written(
        desk_procs, gateway, graph_client, stream_redis, tenant):
    text = ("Hi, I'm Caroline Rao.\nMy router is frozen \U0001F469\u200D\U0001F467 since last night.\n\n"
            "\tIt blinks red \u200F(the lights)\u200E and nothing works.\r\n")
    turn = await gateway.say("Caroline Rao", text, session="multi-line-1")
    written = await reply_to(stream_redis, tenant, turn.episode_id)
    stored = await reads.get_turn(graph_client, tenant, turn.episode_id)
    assert stored.text.encode() == text.encode()
    reply = await reads.get_turn(graph_client, tenant, written.id)
    assert reply.speaker == "intake" and reply.text


async def _stage(client, tenant, tid, stage):
    t = await tickets.get_ticket(client, tenant, tid)
    return t if t.stage is stage else None


async def test_quick_turns_of_a_session_are_answered_in_order(desk_procs, gateway, graph_client, stream_redis,
                                                              tenant):
    sessions = [f"q-{i}" for i in range(3)]
    firsts, seconds = {}, {}
    for i, s in enumerate(sessions):  # each session: a problem, then at once the detail it needs
        firsts[s] = await gateway.say(f"Quick Customer {i}", "my wifi keeps dropping", session=s)
        seconds[s] = await gateway.say(f"Quick Customer {i}", "My router is a TP-Link Archer C6", session=s)
    for s in sessions:
        r1 = await reply_to(stream_redis, tenant, firsts[s].episode_id)
        r2 = await reply_to(stream_redis, tenant, seconds[s].episode_id)
        e1 = await reads.get_turn(graph_client, tenant, r1.id)
        e2 = await reads.get_turn(graph_client, tenant, r2.id)
        assert e1.recorded_at < e2.recorded_at
        # the second answer knows the ticket the first one opened: it was handled after it
        assert r2.ticket_id == r1.ticket_id == desk.ticket_id_for(firsts[s].episode_id)
        transcript = await reads.transcript(graph_client, tenant, s)
        assert [e.episode_id for e in transcript if e.kind == "CustomerMessage"] == [firsts[s].episode_id,
                                                                                     seconds[s].episode_id]
        assert [e.episode_id for e in transcript if e.speaker == "intake"] == [r1.id, r2.id]
    assert sum(1 for p in desk_procs.procs if p.service == "intake") == 3


async def test_a_poison_message_is_dead_lettered_while_others_flow(desk_procs, gateway, stream_redis, tenant):
    await gateway.write_turn("Poison Victim", "hello")  # the tenant exists
    poison = TicketChanged(tenant=tenant, id="T-DOES-NOT-EXIST", version=1, change="handed_off", actor="intake")
    await Publisher(stream_redis).publish(poison)
    await stream_redis.xadd(STREAM_TICKETS, {b"kind": b"ticket_changed", b"payload": b"\xff\xfe not json"})
    ok = await gateway.say("Fine Customer", "hello there")
    await reply_to(stream_redis, tenant, ok.episode_id)

    async def dead():
        letters = await read_dead_letters(stream_redis, STREAM_TICKETS)
        mine = [d for d in letters if d.group == "resolver" and str(poison.notification_id) in d.fields.get("payload", "")]
        garbage = [d for d in letters if d.group == "resolver" and "undecodable" in d.error]
        return (mine, garbage) if mine and garbage else None

    mine, garbage = await eventually(dead, timeout=45, what="dead letters")
    assert "T-DOES-NOT-EXIST" in mine[0].error and mine[0].deliveries == 3
    assert await eventually(lambda: settled(stream_redis, STREAM_TICKETS, "resolver"), what="tickets settled")


async def test_a_duplicated_notification_changes_nothing(desk_procs, gateway, graph_client, stream_redis, tenant):
    await on_a_line(graph_client, tenant, "Dup Customer", lab.FaultKind.ROUTER_FROZEN)
    turn = await gateway.say("Dup Customer", "my router is frozen", session="d-1")
    await reply_to(stream_redis, tenant, turn.episode_id)
    tid = desk.ticket_id_for(turn.episode_id)
    await eventually(lambda: _stage(graph_client, tenant, tid, TicketStage.FIXED), what="ticket fixed")
    await eventually(lambda: settled(stream_redis, STREAM_TICKETS, "resolver"), what="tickets settled")
    before = await counts(graph_client, tenant)
    t = await tickets.peek_ticket(graph_client, tenant, tid)
    publisher = Publisher(stream_redis)
    await publisher.publish(TicketChanged(tenant=tenant, id=tid, version=2, change="handed_off", actor="intake"))
    await publisher.publish(turn.model_copy(update={"notification_id": uuid.uuid4()}))
    # intake handled it (it announced its reply again) and every group is through
    await eventually(lambda: _count(published(stream_redis, STREAM_REPLIES, tenant, reply_to=turn.episode_id), 2),
                     what="reply announced again")
    await eventually(lambda: settled(stream_redis, STREAM_TURNS, "intake"), what="turns settled")
    await eventually(lambda: settled(stream_redis, STREAM_TICKETS, "resolver"), what="tickets settled")
    assert await counts(graph_client, tenant) == before
    assert (await tickets.peek_ticket(graph_client, tenant, tid)).version == t.version


async def _count(awaitable, n):
    return len(await awaitable) >= n


async def test_netops_warns_the_customers_of_a_fault_before_they_complain(desk_procs, graph_client, stream_redis,
                                                                          tenant):
    net = await sample_network.build_sample_network(graph_client, tenant, city="pune",
                                             customers=["Net A", "Net B", "Net C", "Net D", "Net E"])
    olt = net.olts[0]
    behind = sorted(c.customer for c in await network.customers_behind(graph_client, tenant, olt))
    change = await network.set_node_status(graph_client, tenant, olt, up=False)
    await Publisher(stream_redis).publish(NetworkChanged(tenant=tenant, id=olt, version=change.version, change="down",
                                                         actor="lab"))
    declared = await eventually(lambda: published(stream_redis, STREAM_OUTAGES, tenant), what="outage declared")
    notices = await eventually(
        lambda: _at_least(published(stream_redis, STREAM_REPLIES, tenant, reply_to=declared[0].id), len(behind)),
        what="notices")
    told = set()
    for w in notices:
        told.add((await reads.get_turn(graph_client, tenant, w.id)).customer)
    assert sorted(told) == behind and len(notices) == len(behind)


async def _at_least(awaitable, n):
    items = await awaitable
    return items if len(items) >= n else None


RACE_TICKETS = 200
RACE_COPIES = 2  # each handoff announced twice, so replicas really race for the same ticket
RACE_PICKUPS = Query(
    "test_race_pickups",
    "MATCH (t:Ticket) OPTIONAL MATCH (t)<-[p:PICKED_UP]-(:Agent) "
    "RETURN t.ticket_id AS id, t.stage AS stage, t.owner AS owner, t.owner_replica AS replica, "
    "count(p) AS pickups, collect(p.replica) AS by",
    read_only=True,
)


async def test_eight_resolver_replicas_race_over_200_tickets(desk_procs, graph_client, stream_redis, tenant):
    # six more replicas (without the step delay) join the two already running
    extra = desk_procs.start("resolver", 6)
    await desk_procs.ready(stream_redis, extra)
    resolvers = {p.consumer for p in desk_procs.procs if p.service == "resolver" and p.popen.poll() is None}
    assert len(resolvers) == 8
    try:
        ids = []
        for i in range(RACE_TICKETS):
            t = await tickets.open_ticket(graph_client, tenant, customer=f"Race Customer {i % 40}",
                                          issue_kind="billing_double_charge", summary="charged twice",
                                          agent="intake", ticket_id=f"T-RACE-{i:03d}")
            t = await tickets.hand_off(graph_client, tenant, t.id, from_agent="intake", to_role="resolver")
            ids.append((t.id, t.version))
        publisher = Publisher(stream_redis)
        for _ in range(RACE_COPIES):
            for tid, version in ids:
                await publisher.publish(TicketChanged(tenant=tenant, id=tid, version=version, change="handed_off",
                                                      actor="intake"))

        async def all_escalated():  # a double charge is billing's to refund: escalated, never claimed fixed
            rows = [r for r in await graph_client.run(tenant, RACE_PICKUPS) if r["id"].startswith("T-RACE-")]
            return rows if len(rows) == RACE_TICKETS and all(r["stage"] == "checking_line" for r in rows) else None

        await eventually(all_escalated, timeout=120, interval=0.5, what="200 tickets escalated")
        await eventually(lambda: settled(stream_redis, STREAM_TICKETS, "resolver"), what="tickets settled")
        rows = [r for r in await graph_client.run(tenant, RACE_PICKUPS) if r["id"].startswith("T-RACE-")]
        assert all(r["pickups"] == 1 for r in rows), [(r["id"], r["pickups"], r["by"], r["replica"]) for r in rows if r["pickups"] != 1][:5]
        assert all(r["owner"] == "resolver" and r["by"] == [r["replica"]] for r in rows)
        assert {r["replica"] for r in rows} <= resolvers
        assert len({r["replica"] for r in rows}) > 1  # the work was shared
        for tid in ("T-RACE-000", "T-RACE-199"):
            done = await tickets.get_ticket(graph_client, tenant, tid)
            assert [e.event for e in done.timeline].count("picked_up") == 1
            assert [e.event for e in done.timeline].count("fix_step") == 0
            assert len(await reads.escalations(graph_client, tenant, tid)) == 1
    finally:
        for p in extra:
            p.popen.send_signal(signal.SIGTERM)
        assert [p.popen.wait(timeout=30) for p in extra] == [0] * len(extra)


async def test_a_resolver_killed_mid_ticket_is_finished_by_another_replica(desk_procs, gateway, graph_client,
                                                                           stream_redis, tenant):
    await on_a_line(graph_client, tenant, "Kill Customer", lab.FaultKind.WIFI_INTERFERENCE)
    turn = await gateway.say("Kill Customer", "my wifi keeps dropping", session="k-1")
    tid = desk.ticket_id_for(turn.episode_id)

    async def first_step():
        try:
            t = await tickets.get_ticket(graph_client, tenant, tid)
        except NotFound:  # intake has not opened it yet
            return None
        return t if any(e.event == "fix_step" for e in t.timeline) else None

    midway = await eventually(first_step, what="first fix step")
    victim = desk_procs.by_consumer(midway.owner_replica)
    desk_procs.kill(victim)
    assert victim.popen.returncode == -9

    done = await eventually(lambda: _stage(graph_client, tenant, tid, TicketStage.FIXED), timeout=45,
                            what="ticket finished by another replica")
    assert done.owner_replica != victim.consumer and done.owner == "resolver"
    picked = [e for e in await desk.ticket_agent_edges(graph_client, tenant, tid) if e.type == "PICKED_UP"]
    assert [e.replica for e in picked] == [victim.consumer, done.owner_replica]
    # every step done once, the ones the dead replica finished are not repeated
    assert lab_steps(done) == ["change_wifi_channel"]
    assert os.path.exists(victim.log_path)
