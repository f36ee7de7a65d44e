"""The desk agents' read queries (relay_graph.desk.agent_reads / queries/desk.py): what they return, and that each
starts from an index."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from relay_graph.desk import agent_reads as desk

from relay_graph.desk.network import store as network

from relay_graph.desk.tickets import store as tickets
from relay_graph.memory.models import EpisodeInput
from relay_graph.desk.queries import agent_reads as q
from tests import reads, sample_network, statements

T0 = datetime(2026, 9, 5, 10, 0, tzinfo=timezone.utc)


def ep(session, speaker, text, minutes, **kw):
    return EpisodeInput(session=session, speaker=speaker, text=text, at=T0 + timedelta(minutes=minutes), **kw)


async def test_turns_sessions_and_transcripts(memory, graph_client, tenant):
    await memory.write_episodes(tenant, [
        ep("s-old", "Ann Bell", "hello", 0, id="e1", kind="CustomerMessage", customer="Ann Bell"),
        ep("s-new", "Ann Bell", "my wifi drops", 60, id="e2", kind="CustomerMessage", customer="Ann Bell"),
        ep("s-new", "intake", "sorry to hear", 61, id="r-e2", kind="AgentReply", agent="intake", customer="Ann Bell",
           reply_to="e2", ticket_id="T-1", how_i_know=["ticket T-1"]),
    ])
    turn = await reads.get_turn(graph_client, tenant, "e2")
    assert (turn.customer, turn.session, turn.text, turn.at) == ("Ann Bell", "s-new", "my wifi drops",
                                                                 T0 + timedelta(minutes=60))
    reply = await reads.get_turn(graph_client, tenant, desk.reply_id_for("e2"))
    assert (reply.reply_to, reply.ticket_id, reply.how_i_know) == ("e2", "T-1", ["ticket T-1"])
    assert await reads.get_turn(graph_client, tenant, "nope") is None
    # intake's first read: the turn and its reply in one round trip, as get_turn reads each
    both = await desk.get_turn_and_reply(graph_client, tenant, "e2")
    assert both[0] == turn and both[1] == reply.model_copy(update={"customer": None})
    first, none = await desk.get_turn_and_reply(graph_client, tenant, "e1")
    assert first == await reads.get_turn(graph_client, tenant, "e1") and none is None
    assert await desk.get_turn_and_reply(graph_client, tenant, "nope") == (None, None)
    assert await desk.latest_sessions(graph_client, tenant, ["ann bell", "Nobody Here"]) == {
        "ann bell": "s-new", "Nobody Here": None}
    assert [e.episode_id for e in await reads.transcript(graph_client, tenant, "s-new")] == ["e2", "r-e2"]
    assert await desk.existing_episodes(graph_client, tenant, ["e1", "r-e2", "zz"]) == {"e1", "r-e2"}


def test_ids_are_deterministic_and_fit():
    long = "x" * 200
    assert desk.reply_id_for("e1") == "r-e1" and len(desk.reply_id_for(long)) <= 128
    assert desk.reply_id_for(long) == desk.reply_id_for(long)
    assert desk.ticket_id_for("e1") == desk.ticket_id_for("e1") != desk.ticket_id_for("e2")
    assert desk.notice_id("out-1", "Ann Bell", "declared") == desk.notice_id("out-1", "ann  bell", "declared")


async def test_ticket_routing_fixes_outages_and_edges(graph_client, tenant):
    net = await sample_network.build_sample_network(graph_client, tenant, city="pune", customers=["Ann Bell"])
    t = await tickets.open_ticket(graph_client, tenant, customer="Ann Bell", issue_kind="no_connection",
                                  summary="down", agent="intake", ticket_id="T-1")
    await tickets.hand_off(graph_client, tenant, "T-1", from_agent="intake", to_role="resolver")
    r = await desk.ticket_routing(graph_client, tenant, "T-1")
    assert (r.waiting_for, r.owner, r.handoff_to, r.version) == ("resolver", None, "resolver", t.version + 1)
    assert await tickets.claim(graph_client, tenant, "T-1", agent="resolver", replica="r-1")
    r = await desk.ticket_routing(graph_client, tenant, "T-1")
    assert (r.owner, r.owner_replica, r.waiting_for) == ("resolver", "r-1", None) and r.owner_seen_at is not None
    await tickets.record_fix(graph_client, tenant, "T-1", issue_kind="no_connection", steps=["restart_ont"],
                             verified=True, agent="resolver")
    (fix,) = await reads.tried_fixes(graph_client, tenant, "T-1")
    assert (fix.steps, fix.outcome, fix.round) == (["restart_ont"], "verified", 0)
    node = net.splitter_of[net.onts["Ann Bell"]]
    outage = await network.open_outage(graph_client, tenant, node, cause="cut")
    await network.link_tickets_to_outage(graph_client, tenant, outage.outage_id)
    assert [o.outage_id for o in await desk.ticket_outages(graph_client, tenant, "T-1")] == [outage.outage_id]
    assert [t.id for t in await desk.outage_tickets(graph_client, tenant, outage.outage_id)] == ["T-1"]
    assert await desk.latest_outage_of_node(graph_client, tenant, node) == outage.outage_id
    edges = await desk.ticket_agent_edges(graph_client, tenant, "T-1")
    assert [(e.type, e.agent) for e in edges] == [("OPENED", "intake"), ("HANDED_OFF", "intake"),
                                                  ("PICKED_UP", "resolver")]


@pytest.mark.parametrize("query,params", [
    (statements.TURN, {"id": "e1"}),
    (q.TURN_AND_REPLY, {"id": "e1", "reply_id": "r-e1"}),
    (q.EXISTING_EPISODES, {"ids": ["e1"]}),
    (q.LATEST_SESSIONS, {"uids": ["Customer|ann bell"]}),
    (statements.TRANSCRIPT, {"session": "s-1"}),
    (q.TICKET_ROUTING, {"id": "T-1"}),
    (statements.TRIED_FIXES, {"id": "T-1"}),
    (q.TICKET_OUTAGES, {"id": "T-1"}),
    (q.LATEST_OUTAGE_OF_NODE, {"node_id": "n-1"}),
    (q.OUTAGE_TICKETS, {"outage_id": "o-1"}),
    (q.TICKET_AGENT_EDGES, {"id": "T-1"}),
], ids=lambda v: getattr(v, "name", ""))
async def test_each_desk_query_starts_from_an_index(graph_client, tenant, query, params):
    plan = await graph_client.explain(tenant, query, params)
    assert "Index Scan" in plan, plan
