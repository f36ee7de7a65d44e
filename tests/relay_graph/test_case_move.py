"""Moving a customer's case between regional desks (relay_graph.case_move), on a real FalkorDB:
the target answers exactly like the source on both clocks, episodes keep their vectors and are
recallable, tickets keep their timeline, the source marks the move and keeps its history, a repeat
changes nothing, and bad requests are refused before anything is written."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone

import pytest

from relay_graph import episodes, facts, recall, tickets
from relay_graph.case_move import move_case, moves_of, needs_move
from relay_graph.catalogue import ensure_catalogue
from relay_graph.catalogue.models import Placement, PlacementStatus
from relay_graph.errors import InvalidInput, InvalidTenant, NotFound, StateConflict
from relay_graph.models import Clock, EpisodeInput, FactInput, RetireInput
from relay_graph.queries import Query

pytestmark = pytest.mark.falkordb

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
    assert (await episodes.session_chain(graph_client, europe, CUSTOMER)) == \
        (await episodes.session_chain(graph_client, india, CUSTOMER))

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
