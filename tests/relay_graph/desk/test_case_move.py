"""Moving a customer's case between regional desks (relay_graph.desk.customers.case_move), on a real FalkorDB:
the target answers exactly like the source on both clocks, episodes keep their vectors and are
recallable, tickets keep their timeline, the source marks the move and keeps its history, a repeat
changes nothing, and bad requests are refused before anything is written."""

from __future__ import annotations

import re
import uuid
from datetime import datetime, timezone

import pytest

from relay_graph.memory import episodes, facts, recall
from relay_graph.desk.tickets import store as tickets
from relay_graph.desk.customers.case_move import move_case, moves_of, needs_move
from relay_graph.desk.catalogue import ensure_catalogue
from relay_graph.desk.catalogue.models import Placement, PlacementStatus
from relay_graph.runtime.errors import InvalidInput, InvalidTenant, NotFound, StateConflict
from relay_graph.memory.models import Clock, EpisodeInput, FactInput, RetireInput
from relay_graph.runtime.queries import Query
from relay_graph.desk.queries import case_move as q
from tests import reads
from tests.support import register

UTC = timezone.utc
CUSTOMER = "Asha Verma"
NODES = Query("t_move_nodes", "MATCH (n) RETURN count(n) AS n", read_only=True)
EDGES = Query("t_move_edges", "MATCH ()-[r]->() RETURN count(r) AS n", read_only=True)
VECTOR = Query("t_move_vec", "MATCH (e:Episode {episode_id: $id}) RETURN e.embedding AS v", read_only=True)


def d(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


async def counts(client, tenant) -> tuple[int, int]:
    return (await client.run(tenant, NODES))[0]["n"], (await client.run(tenant, EDGES))[0]["n"]


def fresh() -> str:
    return "t-" + uuid.uuid4().hex[:12]


@pytest.fixture
async def desks(graph_client):
    india, europe = fresh(), fresh()
    await register(graph_client.redis, india, europe)
    await ensure_catalogue(graph_client, india, "india")
    await ensure_catalogue(graph_client, europe, "europe")
    return india, europe


async def build_case(client, embedder, tenant) -> dict:
    w = lambda **kw: facts.write_fact(client, tenant, FactInput(subject=CUSTOMER, agent="intake", **kw))  # noqa: E731
    first = await w(predicate="lives_in", object="Pune", valid_from=d(2024, 1, 1), recorded_at=d(2024, 1, 2))
    moved = await w(predicate="lives_in", object="Berlin", valid_from=d(2025, 3, 1), recorded_at=d(2025, 3, 5))
    assert moved.superseded == [first.fact_id]
    await w(predicate="on_plan", object="Fiber 300", valid_from=d(2024, 1, 1), recorded_at=d(2024, 1, 2))
    await w(predicate="phone", object="+91 98200 12345", valid_from=d(2024, 1, 1), recorded_at=d(2024, 1, 2))
    await w(predicate="has_issue", object="no_internet", valid_from=d(2025, 2, 1), recorded_at=d(2025, 2, 1))
    await facts.retire_fact(client, tenant, RetireInput(subject=CUSTOMER, predicate="has_issue", agent="resolver",
                                                        valid_to=d(2025, 2, 3), recorded_at=d(2025, 2, 3)))
    ids = await episodes.write_episodes(client, embedder, tenant, [
        EpisodeInput(session="s-1", speaker="customer", customer=CUSTOMER, kind="CustomerMessage",
                     text="My fibre box shows a red light and there is no internet since Monday.",
                     at=d(2025, 2, 1, 9)),
        EpisodeInput(session="s-2", speaker="customer", customer=CUSTOMER, kind="CustomerMessage",
                     text="We are relocating to Berlin next month, please keep my Fiber 300 plan.",
                     at=d(2025, 2, 20, 10)),
    ])
    t = await tickets.open_ticket(client, tenant, customer=CUSTOMER, issue_kind="no_internet",
                                  summary="red light, no internet", agent="intake", session="s-1",
                                  at=d(2025, 2, 1, 9, 1))
    await tickets.hand_off(client, tenant, t.id, from_agent="intake", to_role="resolver", detail="needs a line test",
                           at=d(2025, 2, 1, 9, 2))
    assert await tickets.claim(client, tenant, t.id, agent="resolver", replica="resolver-1", at=d(2025, 2, 1, 9, 3))
    await tickets.add_event(client, tenant, t.id, agent="resolver", event="line_test", detail="light level ok",
                            at=d(2025, 2, 1, 9, 5))
    return {"episodes": ids, "ticket": t.id}


TIMES = [d(2023, 6, 1), d(2024, 1, 1), d(2024, 1, 2), d(2024, 6, 1), d(2025, 2, 2), d(2025, 2, 4),
         d(2025, 3, 1), d(2025, 3, 3), d(2025, 3, 5), d(2026, 1, 1)]


async def snapshot(client, tenant) -> dict:
    out = {"history": [v.model_dump() for v in await facts.history(client, tenant, CUSTOMER)],
           "current": [v.model_dump() for v in await facts.read_facts(client, tenant, CUSTOMER)]}
    for t in TIMES:
        for clock in Clock:
            out[(t, clock)] = [v.model_dump() for v in await facts.read_facts(client, tenant, CUSTOMER, as_of=t,
                                                                                clock=clock)]
    return out


async def test_case_moves_with_its_history(graph_client, embedder, desks):
    india, europe = desks
    case = await build_case(graph_client, embedder, india)
    before = await snapshot(graph_client, india)
    assert before[(d(2025, 3, 3), Clock.WORLD)] != before[(d(2025, 3, 3), Clock.BELIEF)]  # the clocks differ
    ticket_before = await tickets.get_ticket(graph_client, india, case["ticket"])

    moved = await move_case(graph_client, india, europe, "asha verma", by="intake", at=d(2025, 3, 6))
    assert (moved.customer, moved.from_region, moved.to_region) == (CUSTOMER, "india", "europe")
    assert (moved.facts, moved.episodes, moved.tickets, moved.tickets_marked) == (5, 2, 1, 1)

    # the target answers exactly like the source did, on both clocks, and history is identical
    assert await snapshot(graph_client, europe) == before
    supersede = [v for v in before["history"] if v["object"] == "Pune"][0]
    assert supersede["state"] == "superseded" and supersede["valid_to"] == d(2025, 3, 1)

    # episodes: same vectors (not re-embedded) and recallable in the target
    for eid in case["episodes"]:
        src = (await graph_client.run(india, VECTOR, {"id": eid}))[0]["v"]
        dst = (await graph_client.run(europe, VECTOR, {"id": eid}))[0]["v"]
        assert dst == pytest.approx(src, abs=1e-6)
    found = await recall.recall(graph_client, embedder, europe, "red light on the fibre box", subject=CUSTOMER)
    assert case["episodes"][0] in [i.episode_id for i in found.items]
    assert (await reads.session_chain(graph_client, europe, CUSTOMER)) == \
        (await reads.session_chain(graph_client, india, CUSTOMER))

    # the ticket arrives with its stage and timeline, free for the target desk to claim
    arrived = await tickets.get_ticket(graph_client, europe, case["ticket"])
    assert arrived.stage == ticket_before.stage and arrived.version == ticket_before.version
    assert arrived.timeline == ticket_before.timeline and arrived.handoffs == ticket_before.handoffs
    assert arrived.owner is None
    assert [t.id for t in await tickets.open_tickets_for(graph_client, europe, CUSTOMER)] == [case["ticket"]]

    # the source keeps everything and marks the move
    assert (await snapshot(graph_client, india)) == before
    left = await tickets.get_ticket(graph_client, india, case["ticket"])
    assert left.timeline[:-1] == ticket_before.timeline
    assert (left.timeline[-1].event, left.timeline[-1].detail, left.timeline[-1].agent) == \
        ("moved_desk", "moved to Europe desk", "intake")
    [out] = await moves_of(graph_client, india, CUSTOMER)
    assert (out["direction"], out["to_region"], out["by"], out["at_ms"]) == \
        ("out", "europe", "intake", int(d(2025, 3, 6).timestamp() * 1000))
    [arrival] = await moves_of(graph_client, europe, CUSTOMER)
    assert (arrival["direction"], arrival["from_region"], arrival["move_id"]) == ("in", "india", out["move_id"])

    # a second move copies nothing and changes nothing, on either side
    src_counts, dst_counts = await counts(graph_client, india), await counts(graph_client, europe)
    again = await move_case(graph_client, india, europe, CUSTOMER, by="intake", at=d(2025, 4, 1))
    assert (again.facts, again.episodes, again.tickets, again.tickets_marked) == (0, 0, 0, 0)
    assert again.at == moved.at == d(2025, 3, 6)
    assert await counts(graph_client, india) == src_counts and await counts(graph_client, europe) == dst_counts
    assert (await tickets.get_ticket(graph_client, india, case["ticket"])).timeline == left.timeline


async def test_target_writes_continue_the_moved_history(graph_client, embedder, desks):
    india, europe = desks
    await build_case(graph_client, embedder, india)
    await move_case(graph_client, india, europe, CUSTOMER, by="intake")
    # the target desk learns a new address: it supersedes the moved current one (slot and mirror came along)
    r = await facts.write_fact(graph_client, europe, FactInput(subject=CUSTOMER, predicate="lives_in",
                                                               object="Munich", agent="intake",
                                                               valid_from=d(2025, 9, 1), recorded_at=d(2025, 9, 2)))
    assert r.outcome.value == "superseded" and len(r.superseded) == 1
    [now] = await facts.read_facts(graph_client, europe, CUSTOMER, "lives_in")
    assert now.object == "Munich"
    # moving again now would overwrite what the target learnt: refused, nothing written
    before = await counts(graph_client, europe)
    with pytest.raises(StateConflict) as err:
        await move_case(graph_client, india, europe, CUSTOMER, by="intake")
    assert err.value.code == "case_diverged"
    assert await counts(graph_client, europe) == before


async def test_bad_requests_write_nothing(graph_client, embedder, desks):
    india, europe = desks
    await build_case(graph_client, embedder, india)
    src, dst = await counts(graph_client, india), await counts(graph_client, europe)
    with pytest.raises(InvalidTenant):
        await move_case(graph_client, "Bad Tenant!", europe, CUSTOMER, by="intake")
    with pytest.raises(InvalidTenant):
        await move_case(graph_client, india, "relay:x", CUSTOMER, by="intake")
    with pytest.raises(NotFound) as err:
        await move_case(graph_client, india, europe, "Nobody Known Here", by="intake")
    assert err.value.code == "unknown_customer"
    with pytest.raises(InvalidInput) as err:
        await move_case(graph_client, india, india, CUSTOMER, by="intake")
    assert err.value.code == "same_desk"
    with pytest.raises(InvalidInput):
        await move_case(graph_client, india, europe, CUSTOMER, by="not an agent name!")
    unseeded = fresh()
    await register(graph_client.redis, unseeded)
    with pytest.raises(InvalidInput) as err:
        await move_case(graph_client, india, unseeded, CUSTOMER, by="intake")
    assert err.value.code == "not_a_regional_desk"
    assert await counts(graph_client, india) == src and await counts(graph_client, europe) == dst
    assert not await graph_client.graph_exists(unseeded) or await counts(graph_client, unseeded) == (0, 0)


def placement(status: PlacementStatus, region: str | None) -> Placement:
    return Placement(status=status, query="x", region=region)


def test_needs_move_routes_by_the_customers_region():
    assert needs_move(placement(PlacementStatus.SERVED, "europe"), "india") == "europe"
    assert needs_move(placement(PlacementStatus.NO_LINE, "europe"), "india") == "europe"  # that desk answers
    assert needs_move(placement(PlacementStatus.SERVED, "india"), "india") is None
    assert needs_move(placement(PlacementStatus.AMBIGUOUS, None), "india") is None
    assert needs_move(placement(PlacementStatus.UNKNOWN, None), "europe") is None
    with pytest.raises(InvalidInput):
        needs_move(placement(PlacementStatus.SERVED, "europe"), "atlantis")


# ---------------------------------------------------------------------------------------------
# a case with several tickets, conflicts and speakers: every one of them arrives whole

RAVI = "Ravi Kumar"
TICKET_LINKS = Query(
    "t_move_ticket_links",
    "MATCH (t:Ticket {ticket_id: $id}) "
    "OPTIONAL MATCH (t)-[:TICKET_ABOUT]->(i:Entity) WITH t, collect(i.uid) AS issues "
    "OPTIONAL MATCH (t)-[:OPENED_IN]->(s:Session) WITH t, issues, collect(s.session_id) AS opened_in "
    "OPTIONAL MATCH (t)-[:HAS_EVENT]->(e:TicketEvent) WITH t, issues, opened_in, collect(e.seq) AS events "
    "OPTIONAL MATCH (a:Agent)-[r:OPENED|HANDED_OFF|PICKED_UP]->(t) "
    "WITH t, issues, opened_in, events, collect([type(r), a.name, r.at_ms]) AS by_agents "
    "OPTIONAL MATCH (tech:Technician)-[:VISITS]->(v:TechVisit)-[:FOR_TICKET]->(t) "
    "RETURN issues, opened_in, events, by_agents, collect([tech.name, v.visit_id]) AS visits",
    read_only=True,
)
CONFLICT_LINKS = Query(
    "t_move_conflict_links",
    "MATCH (k:Conflict) "
    "OPTIONAL MATCH (k)-[:BETWEEN]->(b:Fact) WITH k, collect(b.fact_id) AS between "
    "OPTIONAL MATCH (k)-[:SETTLED_FOR]->(w:Fact) "
    "RETURN k.conflict_id AS id, k.open AS open, between, collect(w.fact_id) AS settled_for",
    read_only=True,
)
SPEAKER_LINKS = Query(
    "t_move_speaker_links",
    "MATCH (ep:Episode {episode_id: $id}) "
    "OPTIONAL MATCH (ep)-[:SPOKEN_BY]->(sp:Speaker) WITH ep, collect([sp.key, sp.name]) AS spoken "
    "OPTIONAL MATCH (ep)-[:NAMES]->(nm:Speaker) "
    "RETURN ep.pos AS pos, spoken, collect(nm.key) AS names",
    read_only=True,
)
AGENTS = Query("t_move_agents", "MATCH (a:Agent) RETURN a.name AS name", read_only=True)


def as_sets(row: dict) -> dict:
    return {k: sorted(map(repr, v)) if isinstance(v, list) else v for k, v in row.items()}


async def build_busy_case(client, embedder, tenant) -> dict:
    w = lambda **kw: facts.write_fact(client, tenant, FactInput(subject=RAVI, **kw))  # noqa: E731
    # two conflicts: an open one (lives_in) and a settled one (on_plan)
    await w(predicate="lives_in", object="Pune", agent="intake", recorded_at=d(2025, 1, 2))
    mumbai = await w(predicate="lives_in", object="Mumbai", agent="resolver", recorded_at=d(2025, 1, 3))
    await w(predicate="on_plan", object="Fiber 300", agent="intake", recorded_at=d(2025, 1, 2))
    plan = await w(predicate="on_plan", object="Fiber 500", agent="resolver", recorded_at=d(2025, 1, 4))
    assert mumbai.conflict_id and plan.conflict_id and mumbai.conflict_id != plan.conflict_id
    await facts.settle(client, tenant, plan.conflict_id, plan.fact_id, "maria")

    ids = await episodes.write_episodes(client, embedder, tenant, [
        EpisodeInput(session=f"r-{i}", speaker=RAVI, customer=RAVI, kind="CustomerMessage",
                     text=f"Problem number {i}: my connection keeps dropping.", at=d(2025, 2, i, 9))
        for i in (1, 2, 3)
    ] + [
        EpisodeInput(session=f"r-{i}", speaker="intake", agent="intake", kind="AgentReply",
                     text=f"Ravi Kumar, we opened ticket {i} for you.", at=d(2025, 2, i, 9, 1))
        for i in (1, 2, 3)
    ])
    issues = ["no_internet", "slow_speed", "router_reboots"]
    ids_t = []
    for i, issue in enumerate(issues, start=1):
        t = await tickets.open_ticket(client, tenant, customer=RAVI, issue_kind=issue, summary=f"problem {i}",
                                      agent="intake", session=f"r-{i}", at=d(2025, 2, i, 9, 2))
        await tickets.hand_off(client, tenant, t.id, from_agent="intake", to_role="resolver", at=d(2025, 2, i, 9, 3))
        assert await tickets.claim(client, tenant, t.id, agent="resolver", replica="resolver-1",
                                   at=d(2025, 2, i, 9, 4))
        await tickets.add_event(client, tenant, t.id, agent="resolver", event="line_test", detail=f"test {i}",
                                at=d(2025, 2, i, 9, 5))
        if i >= 2:  # a second handoff and pick-up, and a technician
            await tickets.hand_off(client, tenant, t.id, from_agent="resolver", to_role="netops",
                                   at=d(2025, 2, i, 9, 6))
            assert await tickets.claim(client, tenant, t.id, agent="netops", replica="netops-1",
                                       at=d(2025, 2, i, 9, 7))
            await tickets.schedule_visit(client, tenant, t.id, technician=f"Tech {i}", at=d(2025, 2, i + 1, 10),
                                         agent="netops")
        ids_t.append(t.id)
    return {"episodes": ids, "tickets": ids_t, "conflicts": sorted([mumbai.conflict_id, plan.conflict_id])}


async def test_every_ticket_conflict_and_speaker_link_moves(graph_client, embedder, desks):
    india, europe = desks
    case = await build_busy_case(graph_client, embedder, india)
    before = {tid: await tickets.get_ticket(graph_client, india, tid) for tid in case["tickets"]}
    links = {tid: as_sets((await graph_client.run(india, TICKET_LINKS, {"id": tid}))[0]) for tid in case["tickets"]}
    speakers = {e: as_sets((await graph_client.run(india, SPEAKER_LINKS, {"id": e}))[0]) for e in case["episodes"]}
    conflicts = sorted(map(as_sets, await graph_client.run(india, CONFLICT_LINKS)), key=lambda r: r["id"])
    assert [c["id"] for c in conflicts] == case["conflicts"]
    assert sum(len(r["events"]) for r in links.values()) == 4 + 7 + 7  # every ticket has a timeline
    # the episodes have speakers, the agent's replies name the customer, and places in their session
    assert all(len(s["spoken"]) == 1 and s["pos"] is not None for s in speakers.values())
    assert sum(len(s["names"]) for s in speakers.values()) == 3

    moved = await move_case(graph_client, india, europe, RAVI, by="intake", at=d(2025, 3, 1))
    assert (moved.episodes, moved.tickets, moved.tickets_marked) == (6, 3, 3)

    for tid in case["tickets"]:  # every ticket, not only the first, with its timeline, handoffs and visits
        arrived = await tickets.get_ticket(graph_client, europe, tid)
        assert arrived.timeline == before[tid].timeline and arrived.handoffs == before[tid].handoffs
        assert arrived.visits == before[tid].visits and arrived.stage == before[tid].stage
        assert arrived.owner is None
        assert as_sets((await graph_client.run(europe, TICKET_LINKS, {"id": tid}))[0]) == links[tid]
    assert len(before[case["tickets"][2]].handoffs) == 2 and len(before[case["tickets"][2]].visits) == 1
    assert sorted(map(as_sets, await graph_client.run(europe, CONFLICT_LINKS)), key=lambda r: r["id"]) == conflicts
    for eid in case["episodes"]:
        assert as_sets((await graph_client.run(europe, SPEAKER_LINKS, {"id": eid}))[0]) == speakers[eid]
    names = [r["name"] for r in await graph_client.run(europe, AGENTS)]
    assert len(names) == len(set(names))  # one Agent node per name, however many rows wrote it

    # a second move creates nothing on either side
    src_counts, dst_counts = await counts(graph_client, india), await counts(graph_client, europe)
    again = await move_case(graph_client, india, europe, RAVI, by="intake", at=d(2025, 4, 1))
    assert (again.facts, again.episodes, again.tickets, again.tickets_marked) == (0, 0, 0, 0)
    assert await counts(graph_client, india) == src_counts and await counts(graph_client, europe) == dst_counts


async def test_move_writes_start_every_phase_from_an_index(graph_client, tenant):
    await graph_client.ensure_schema(tenant)
    for query in (q.WRITE_TICKETS, q.WRITE_CONFLICTS, q.WRITE_EPISODES, q.EPISODES, q.TICKETS, q.CONFLICTS):
        params = {name: ("u" if name == "uid" else []) for name in set(re.findall(r"\$(\w+)", query.cypher))}
        plan = await graph_client.explain(tenant, query, params)
        assert "Label Scan" not in plan and "All Node Scan" not in plan, (query.name, plan)
        # no per-row write subquery (FalkorDB 4.16 runs a writing CALL for the first outer row only)
        assert "CALL {" not in query.cypher, query.name
