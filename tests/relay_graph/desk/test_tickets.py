"""The desk aggregate against a real FalkorDB: tickets, handoffs, claims, stages, the timeline,
confirmations, fixes and procedures, visits; idempotence, races, isolation and query plans."""

from __future__ import annotations

import asyncio
import random
from datetime import datetime, timedelta, timezone

import pytest

from relay_graph.desk.tickets import store as tk
from relay_graph.runtime.db import GraphClient
from relay_graph.memory.entities import entity_uid
from relay_graph.runtime.errors import AlreadyExists, InvalidInput, InvalidTenant, NotFound
from relay_graph.runtime.queries import Query
from relay_graph.desk.queries import tickets as q
from relay_graph.desk.tickets.models import TicketStage
from tests import reads
from tests.support import register

T0 = datetime(2026, 9, 5, 10, 0, tzinfo=timezone.utc)

# What the graph holds, counted directly (tests only: the module under test never exposes raw Cypher).
_COUNTS = Query(
    "test_counts",
    "MATCH (n) WITH labels(n) AS ls UNWIND ls AS l RETURN l AS k, count(*) AS n "
    "UNION ALL MATCH ()-[r]->() RETURN type(r) AS k, count(r) AS n",
    read_only=True,
)


async def counts(client: GraphClient, tenant: str) -> dict[str, int]:
    return {r["k"]: r["n"] for r in await client.run(tenant, _COUNTS)}


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


async def opened(client, tenant, tid="T-1", customer="Alice Rao", issue="no internet", **kw):
    return await tk.open_ticket(
        client, tenant, customer=customer, issue_kind=issue, summary="the light on the box is red",
        agent="intake", ticket_id=tid, at=kw.pop("at", at(0)), **kw,
    )


# ---------------------------------------------------------------- open


async def test_open_creates_ticket_on_the_facts_customer_node_and_is_idempotent(graph_client, tenant):
    t = await opened(graph_client, tenant, session="sess-1")
    assert (t.id, t.stage, t.version, t.owner, t.changed) == ("T-1", TicketStage.REPORTED, 1, None, True)
    assert t.customer == "Alice Rao" and t.issue == "no internet" and t.opened_at == T0
    before = await counts(graph_client, tenant)

    again = await tk.open_ticket(graph_client, tenant, customer="  alice   RAO ", issue_kind="No Internet",
                                 summary="different words", agent="intake", ticket_id="T-1", at=at(5))
    assert again.changed is False and again.version == 1 and again.summary == t.summary
    assert await counts(graph_client, tenant) == before

    # one customer node, keyed the way the facts module keys it, with both labels
    rows = await graph_client.run(tenant, Query("c", "MATCH (c:Customer:Entity) RETURN c", True))
    assert len(rows) == 1
    assert rows[0]["c"]["uid"] == entity_uid("Customer", "alice rao")
    assert rows[0]["c"]["type"] == "Customer" and rows[0]["c"]["name_key"] == "alice rao"
    assert before["HAS_TICKET"] == 1 and before["TICKET_ABOUT"] == 1 and before["Issue"] == 1
    assert await reads.customer_of_session(graph_client, tenant, "sess-1") == "Alice Rao"
    assert await reads.customer_of_session(graph_client, tenant, "sess-unknown") is None


async def test_same_ticket_id_for_another_customer_is_refused_and_writes_nothing(graph_client, tenant):
    await opened(graph_client, tenant)
    before = await counts(graph_client, tenant)
    with pytest.raises(AlreadyExists):
        await opened(graph_client, tenant, customer="Bob Singh")
    assert await counts(graph_client, tenant) == before


async def test_open_without_id_makes_a_fresh_ticket_each_time(graph_client, tenant):
    a = await tk.open_ticket(graph_client, tenant, customer="c one", issue_kind="slow", summary="s", agent="intake")
    b = await tk.open_ticket(graph_client, tenant, customer="c one", issue_kind="slow", summary="s", agent="intake")
    assert a.id != b.id
    assert {s.id for s in await tk.list_tickets(graph_client, tenant, "C One")} == {a.id, b.id}


async def test_text_is_stored_verbatim_never_run_as_cypher(graph_client, tenant):
    evil = "x'}) MATCH (n) DETACH DELETE n //\" \\ $id"
    t = await tk.open_ticket(graph_client, tenant, customer="eve", issue_kind="slow", summary=evil,
                             agent="intake", ticket_id="T-evil")
    await tk.add_event(graph_client, tenant, "T-evil", agent="intake", event="note", detail=evil)
    d = await tk.get_ticket(graph_client, tenant, "T-evil")
    assert t.summary == evil and d.timeline[-1].detail == evil
    assert (await counts(graph_client, tenant))["Ticket"] == 1


# ---------------------------------------------------------------- the flow and the timeline


async def test_handoff_claim_stages_confirm_flow_with_ordered_timeline(graph_client, tenant):
    await opened(graph_client, tenant)
    h = await tk.hand_off(graph_client, tenant, "T-1", from_agent="intake", to_role="resolver", at=at(1))
    assert (h.stage, h.version, h.changed) == (TicketStage.REPORTED, 2, True)
    assert await tk.claim(graph_client, tenant, "T-1", agent="resolver", replica="resolver-a", at=at(2))
    s1 = await tk.set_stage(graph_client, tenant, "T-1", stage="checking_line", agent="resolver",
                            detail="measuring the line", at=at(3))
    s2 = await tk.set_stage(graph_client, tenant, "T-1", stage=TicketStage.FIXING, agent="resolver",
                            detail="restarting the ONT", expected_version=s1.version, at=at(4))
    await tk.add_event(graph_client, tenant, "T-1", agent="resolver", event="measured", detail="-19 dBm", at=at(4))
    s3 = await tk.set_stage(graph_client, tenant, "T-1", stage="fixed", agent="resolver", at=at(5))
    c = await tk.confirm(graph_client, tenant, "T-1", fixed=True, by="alice", at=at(6))
    assert [s1.version, s2.version, s3.version, c.version] == [3, 4, 5, 6]
    assert c.stage is TicketStage.CLOSED and c.closed_at == at(6) and c.owner == "resolver"

    d = await tk.get_ticket(graph_client, tenant, "T-1")
    assert [(e.event, e.agent) for e in d.timeline] == [
        ("opened", "intake"), ("handed_off", "intake"), ("picked_up", "resolver"),
        ("checking_line", "resolver"), ("fixing", "resolver"), ("measured", "resolver"),
        ("fixed", "resolver"), ("confirmed_fixed", "alice"),
    ]
    assert d.timeline[3].detail == "measuring the line"
    # same-millisecond entries still come back in the order they were written
    assert d.timeline[4].at == d.timeline[5].at and d.timeline[4].event == "fixing"
    body = d.model_dump(mode="json")
    assert body["handoffs"] == [{"from": "intake", "to": "resolver", "at": "2026-09-05T10:00:01Z"}]
    assert {"id", "stage", "owner", "customer", "issue", "timeline", "handoffs"} <= body.keys()
    assert body["customer"] == "Alice Rao" and body["issue"] == "no internet"

    # a closed ticket takes no stage but `reopened`, no handoff, no claim
    late = await tk.set_stage(graph_client, tenant, "T-1", stage="fixing", agent="resolver", at=at(9))
    assert late.changed is False and late.stage is TicketStage.CLOSED and late.version == 6
    assert (await tk.hand_off(graph_client, tenant, "T-1", from_agent="resolver", to_role="netops")).changed is False
    assert not await tk.claim(graph_client, tenant, "T-1", agent="netops", replica="n1")


async def test_repeated_handoff_changes_nothing_and_handoff_releases_the_giver(graph_client, tenant):
    await opened(graph_client, tenant)
    await tk.hand_off(graph_client, tenant, "T-1", from_agent="intake", to_role="resolver", at=at(1))
    before = await counts(graph_client, tenant)
    again = await tk.hand_off(graph_client, tenant, "T-1", from_agent="intake", to_role="resolver", at=at(2))
    assert again.changed is False and again.version == 2
    assert await counts(graph_client, tenant) == before

    assert await tk.claim(graph_client, tenant, "T-1", agent="resolver", replica="r1")
    assert not await tk.claim(graph_client, tenant, "T-1", agent="netops", replica="n1")
    passed = await tk.hand_off(graph_client, tenant, "T-1", from_agent="resolver", to_role="netops", at=at(3))
    assert passed.changed and passed.owner is None and passed.version == 3
    assert await tk.claim(graph_client, tenant, "T-1", agent="netops", replica="n1")
    # back and forth is three handoffs, in order
    await tk.hand_off(graph_client, tenant, "T-1", from_agent="netops", to_role="resolver", at=at(4))
    d = await tk.get_ticket(graph_client, tenant, "T-1")
    assert [(h.from_, h.to) for h in d.handoffs] == [("intake", "resolver"), ("resolver", "netops"),
                                                     ("netops", "resolver")]
    assert d.owner is None


# ---------------------------------------------------------------- claims


async def test_claim_is_idempotent_for_the_winner_and_refused_to_others(graph_client, tenant):
    await opened(graph_client, tenant)
    assert await tk.claim(graph_client, tenant, "T-1", agent="resolver", replica="r1")
    before = await counts(graph_client, tenant)
    assert await tk.claim(graph_client, tenant, "T-1", agent="resolver", replica="r1")
    assert not await tk.claim(graph_client, tenant, "T-1", agent="resolver", replica="r2")
    assert not await tk.claim(graph_client, tenant, "T-1", agent="netops", replica="r1")
    assert await counts(graph_client, tenant) == before
    assert before["PICKED_UP"] == 1
    t = await tk.peek_ticket(graph_client, tenant, "T-1")
    assert (t.owner, t.owner_replica) == ("resolver", "r1")


async def test_racing_replicas_each_ticket_has_exactly_one_owner(graph_client, tenant):
    n_tickets, n_replicas = 200, 8
    ids = [f"T-{i:04d}" for i in range(n_tickets)]
    await asyncio.gather(*(opened(graph_client, tenant, tid=i, customer=f"customer {n % 17}")
                           for n, i in enumerate(ids)))
    clients = [GraphClient(graph_client.settings) for _ in range(n_replicas)]  # separate pools
    try:
        async def replica(k: int) -> list[str]:
            order = ids[:]
            random.Random(k).shuffle(order)
            won = await asyncio.gather(*(tk.claim(clients[k], tenant, i, agent="resolver", replica=f"r{k}")
                                         for i in order))
            return [i for i, w in zip(order, won) if w]

        wins = await asyncio.gather(*(replica(k) for k in range(n_replicas)))
    finally:
        await asyncio.gather(*(c.close() for c in clients))

    winners: dict[str, list[int]] = {}
    for k, mine in enumerate(wins):
        for i in mine:
            winners.setdefault(i, []).append(k)
    assert sorted(winners) == ids and all(len(v) == 1 for v in winners.values())
    rows = await graph_client.run(tenant, Query(
        "owners", "MATCH (t:Ticket) OPTIONAL MATCH (a:Agent)-[p:PICKED_UP]->(t) "
        "RETURN t.ticket_id AS id, t.owner AS owner, t.owner_replica AS replica, "
        "count(p) AS picks, collect(p.replica) AS pick_replicas", True))
    assert len(rows) == n_tickets
    for r in rows:
        assert r["owner"] == "resolver" and r["picks"] == 1
        assert r["replica"] == r["pick_replicas"][0] == f"r{winners[r['id']][0]}"


async def test_a_replica_of_the_same_role_takes_over_from_a_dead_one(graph_client, tenant):
    await opened(graph_client, tenant)
    assert await tk.claim(graph_client, tenant, "T-1", agent="resolver", replica="r1", at=at(0))
    # the holder is still fresh: no takeover by lease
    assert not await tk.claim(graph_client, tenant, "T-1", agent="resolver", replica="r2", at=at(10), lease_ms=30_000)
    # the holder's own work keeps it fresh
    await tk.set_stage(graph_client, tenant, "T-1", stage="checking_line", agent="resolver", at=at(25))
    assert not await tk.claim(graph_client, tenant, "T-1", agent="resolver", replica="r2", at=at(50), lease_ms=30_000)
    # another role never takes over
    assert not await tk.claim(graph_client, tenant, "T-1", agent="netops", replica="n1", at=at(500), lease_ms=1)
    # silent for longer than the lease: r2 continues the ticket
    assert await tk.claim(graph_client, tenant, "T-1", agent="resolver", replica="r2", at=at(60), lease_ms=30_000)
    assert not await tk.claim(graph_client, tenant, "T-1", agent="resolver", replica="r1", at=at(61))
    # the runtime names the dead consumer whose pending message it reclaimed
    assert not await tk.claim(graph_client, tenant, "T-1", agent="resolver", replica="r3", take_over="r1", at=at(62))
    assert await tk.claim(graph_client, tenant, "T-1", agent="resolver", replica="r3", take_over="r2", at=at(63))
    t = await tk.peek_ticket(graph_client, tenant, "T-1")
    assert (t.owner, t.owner_replica, t.stage) == ("resolver", "r3", TicketStage.CHECKING_LINE)
    rows = await graph_client.run(tenant, Query(
        "picks", "MATCH (t:Ticket {ticket_id: 'T-1'})<-[p:PICKED_UP]-(:Agent) "
        "RETURN p.replica AS r, p.took_over_from AS f ORDER BY p.at_ms", True))
    assert [(r["r"], r["f"]) for r in rows] == [("r1", None), ("r2", "r1"), ("r3", "r2")]


async def test_release_lets_any_replica_claim(graph_client, tenant):
    await opened(graph_client, tenant)
    assert await tk.claim(graph_client, tenant, "T-1", agent="resolver", replica="r1")
    assert not await tk.release(graph_client, tenant, "T-1", agent="resolver", replica="r2")
    assert not await tk.release(graph_client, tenant, "T-1", agent="netops")
    assert await tk.release(graph_client, tenant, "T-1", agent="resolver", replica="r1", detail="shutting down")
    assert not await tk.release(graph_client, tenant, "T-1", agent="resolver")
    assert await tk.claim(graph_client, tenant, "T-1", agent="resolver", replica="r2")


# ---------------------------------------------------------------- stages and versions


async def test_stale_expected_version_and_repeated_stage_change_nothing(graph_client, tenant):
    await opened(graph_client, tenant)
    s = await tk.set_stage(graph_client, tenant, "T-1", stage="checking_line", agent="resolver", expected_version=1)
    assert s.changed and s.version == 2
    before = await counts(graph_client, tenant)
    stale = await tk.set_stage(graph_client, tenant, "T-1", stage="fixing", agent="resolver", expected_version=1)
    assert (stale.changed, stale.stage, stale.version) == (False, TicketStage.CHECKING_LINE, 2)
    same = await tk.set_stage(graph_client, tenant, "T-1", stage="checking_line", agent="resolver")
    assert same.changed is False and same.version == 2
    assert await counts(graph_client, tenant) == before
    ok = await tk.set_stage(graph_client, tenant, "T-1", stage="fixing", agent="resolver", expected_version=2)
    assert ok.changed and ok.stage is TicketStage.FIXING and ok.version == 3


async def test_bad_stage_and_bad_names_are_refused_and_write_nothing(graph_client, tenant):
    await opened(graph_client, tenant)
    before = await counts(graph_client, tenant)
    with pytest.raises(InvalidInput):
        await tk.set_stage(graph_client, tenant, "T-1", stage="teleported", agent="resolver")
    with pytest.raises(InvalidInput):
        await tk.set_stage(graph_client, tenant, "T-1", stage="fixing", agent="bad agent name")
    with pytest.raises(InvalidInput):
        await tk.claim(graph_client, tenant, "T-1\x00", agent="resolver", replica="r1")
    with pytest.raises(NotFound):  # an identifier like any other (values are parameters, never Cypher)
        await tk.claim(graph_client, tenant, "T-1 OR 1=1", agent="resolver", replica="r1")
    with pytest.raises(InvalidInput):
        await tk.add_event(graph_client, tenant, "T-1", agent="resolver", event="Not An Event")
    with pytest.raises(InvalidInput):
        await tk.record_fix(graph_client, tenant, "T-1", issue_kind="slow", steps=[], verified=True, agent="r")
    with pytest.raises(InvalidInput):
        await tk.open_ticket(graph_client, tenant, customer="  ", issue_kind="slow", summary="s", agent="intake")
    assert await counts(graph_client, tenant) == before


# ---------------------------------------------------------------- fixes and procedures


async def new_ticket(client, tenant, tid, issue="no internet"):
    await opened(client, tenant, tid=tid, issue=issue)
    return tid


RESTART = ["Restart the ONT", "power-cycle the router"]
RESEAT = ["reseat the fibre patch", "clean the connector", "re-measure"]


async def test_same_kind_and_steps_are_one_procedure_with_an_ordered_step_chain(graph_client, tenant):
    a = await tk.record_fix(graph_client, tenant, await new_ticket(graph_client, tenant, "T-a"),
                            issue_kind="No Internet", steps=RESTART, verified=True, agent="resolver")
    b = await tk.record_fix(graph_client, tenant, await new_ticket(graph_client, tenant, "T-b"),
                            issue_kind="no internet", steps=["restart the  ont", "Power-cycle the router"],
                            verified=True, agent="resolver")
    other_order = await tk.record_fix(graph_client, tenant, await new_ticket(graph_client, tenant, "T-c"),
                                      issue_kind="no internet", steps=RESTART[::-1], verified=True, agent="resolver")
    assert a.procedure_id == b.procedure_id != other_order.procedure_id
    assert (b.successes, b.failures, b.counted) == (2, 0, True)
    p = await tk.get_procedure(graph_client, tenant, a.procedure_id)
    assert p.steps == RESTART  # read along FIRST/NEXT
    c = await counts(graph_client, tenant)
    assert c["Procedure"] == 2 and c["ProcStep"] == 4 and c["FIRST"] == 2 and c["NEXT"] == 2
    with pytest.raises(NotFound):
        await tk.get_procedure(graph_client, tenant, "proc-nope")


async def test_a_redelivered_fix_record_counts_once(graph_client, tenant):
    tid = await new_ticket(graph_client, tenant, "T-1")
    first = await tk.record_fix(graph_client, tenant, tid, issue_kind="no internet", steps=RESTART,
                                verified=True, agent="resolver")
    before = await counts(graph_client, tenant)
    again = await tk.record_fix(graph_client, tenant, tid, issue_kind="no internet", steps=RESTART,
                                verified=True, agent="resolver")
    assert first.counted and not again.counted and again.successes == 1
    assert await counts(graph_client, tenant) == before
    failed = await tk.record_fix(graph_client, tenant, tid, issue_kind="no internet", steps=RESEAT,
                                 verified=False, agent="resolver")
    failed_again = await tk.record_fix(graph_client, tenant, tid, issue_kind="no internet", steps=RESEAT,
                                       verified=False, agent="resolver")
    assert failed.counted and not failed_again.counted and failed_again.failures == 1
    d = await tk.get_ticket(graph_client, tenant, tid)
    assert d.fixed_by == [first.procedure_id]
    assert [e.event for e in d.timeline] == ["opened", "fix_verified", "fix_failed"]
    assert d.timeline[1].detail == f"{first.procedure_id}: Restart the ONT > power-cycle the router"


async def test_ranking_follows_smoothed_success_rate_as_successes_and_failures_pile_up(graph_client, tenant):
    async def fix(tid, steps, verified=True, issue="no internet"):
        await new_ticket(graph_client, tenant, tid, issue)
        return await tk.record_fix(graph_client, tenant, tid, issue_kind=issue, steps=steps,
                                   verified=verified, agent="resolver")

    assert await tk.best_procedures(graph_client, tenant, "no internet") == []
    restart = (await fix("T-r1", RESTART)).procedure_id
    reseat = (await fix("T-s1", RESEAT)).procedure_id
    await fix("T-s2", RESEAT)
    await fix("T-u1", ["call the customer back"], verified=False)  # never fixed anything: not offered
    await fix("T-x1", RESTART, issue="wifi drops")  # same steps, another kind: another procedure
    best = await tk.best_procedures(graph_client, tenant, "No Internet")
    assert [p.procedure_id for p in best] == [reseat, restart]  # 3/4 over 2/3
    assert [round(p.score, 4) for p in best] == [0.75, round(2 / 3, 4)]
    assert len(await tk.best_procedures(graph_client, tenant, "no internet", limit=1)) == 1

    # the customers on reseat's tickets say it did not hold: 2 successes, 2 failures -> 3/6
    for tid in ("T-s1", "T-s2"):
        assert (await tk.confirm(graph_client, tenant, tid, fixed=False, by="customer")).changed
    best = await tk.best_procedures(graph_client, tenant, "no internet")
    ranked = {p.procedure_id: p for p in best}
    assert (ranked[reseat].successes, ranked[reseat].failures, ranked[reseat].score) == (2, 2, 0.5)
    assert best[0].procedure_id == restart  # 2/3 now beats 1/2

    # restart piles up successes and then failures
    for i in range(3):
        await fix(f"T-r{i + 2}", RESTART)
    assert (await tk.best_procedures(graph_client, tenant, "no internet"))[0].score == pytest.approx(5 / 6)
    for i in range(5):
        await fix(f"T-rf{i}", RESTART, verified=False)
    best = await tk.best_procedures(graph_client, tenant, "no internet")
    ranked = {p.procedure_id: p for p in best}
    assert (ranked[restart].successes, ranked[restart].failures) == (4, 5)
    assert ranked[restart].score == pytest.approx(5 / 11)
    assert best[0].procedure_id == reseat  # 1/2 over 5/11
    assert await tk.best_procedures(graph_client, tenant, "slow speed") == []


async def test_not_fixed_reopens_counts_one_failure_and_frees_the_ticket(graph_client, tenant):
    tid = await new_ticket(graph_client, tenant, "T-1")
    assert await tk.claim(graph_client, tenant, tid, agent="resolver", replica="r1")
    fix = await tk.record_fix(graph_client, tenant, tid, issue_kind="no internet", steps=RESTART,
                              verified=True, agent="resolver")
    fixed = await tk.set_stage(graph_client, tenant, tid, stage="fixed", agent="resolver")

    re = await tk.confirm(graph_client, tenant, tid, fixed=False, by="alice", at=at(100))
    assert re.changed and re.stage is TicketStage.REOPENED and re.owner is None and re.round == 1
    assert re.version == fixed.version + 1
    [p] = await tk.best_procedures(graph_client, tenant, "no internet")
    assert (p.procedure_id, p.successes, p.failures) == (fix.procedure_id, 1, 1)
    # said twice: nothing more
    before = await counts(graph_client, tenant)
    twice = await tk.confirm(graph_client, tenant, tid, fixed=False, by="alice")
    assert twice.changed is False and twice.version == re.version
    assert await counts(graph_client, tenant) == before
    assert (await tk.best_procedures(graph_client, tenant, "no internet"))[0].failures == 1
    assert (await tk.get_ticket(graph_client, tenant, tid)).fixed_by == []

    # another replica can pick the reopened ticket up; a new round counts the same procedure afresh
    assert await tk.claim(graph_client, tenant, tid, agent="resolver", replica="r2")
    again = await tk.record_fix(graph_client, tenant, tid, issue_kind="no internet", steps=RESTART,
                                verified=True, agent="resolver")
    assert again.counted and (again.successes, again.failures) == (2, 1)
    closed = await tk.confirm(graph_client, tenant, tid, fixed=True, by="alice", at=at(200))
    assert closed.stage is TicketStage.CLOSED and closed.closed_at == at(200)
    assert (await tk.confirm(graph_client, tenant, tid, fixed=True, by="alice")).changed is False
    [p] = await tk.best_procedures(graph_client, tenant, "no internet")
    assert (p.successes, p.failures) == (2, 1)


# ---------------------------------------------------------------- visits and lists


async def test_visit_is_booked_once_and_shows_on_the_ticket(graph_client, tenant):
    await opened(graph_client, tenant)
    v = await tk.schedule_visit(graph_client, tenant, "T-1", technician="Ravi Kumar", at=at(86_400))
    assert v.changed and v.at == at(86_400) and v.ticket_id == "T-1"
    before = await counts(graph_client, tenant)
    again = await tk.schedule_visit(graph_client, tenant, "T-1", technician="ravi  kumar", at=at(86_400))
    assert again.changed is False and again.visit_id == v.visit_id
    assert await counts(graph_client, tenant) == before
    assert before["VISITS"] == before["FOR_TICKET"] == 1 and before["Technician"] == 1
    d = await tk.get_ticket(graph_client, tenant, "T-1")
    assert [x.visit_id for x in d.visits] == [v.visit_id] and d.timeline[-1].event == "visit_scheduled"


async def test_lists_by_customer_newest_first_and_open_only(graph_client, tenant):
    await opened(graph_client, tenant, tid="T-old", at=at(0))
    await opened(graph_client, tenant, tid="T-new", at=at(60))
    await opened(graph_client, tenant, tid="T-bob", customer="Bob Singh", at=at(30))
    await tk.confirm(graph_client, tenant, "T-old", fixed=True, by="alice")
    assert [t.id for t in await tk.list_tickets(graph_client, tenant)] == ["T-new", "T-bob", "T-old"]
    mine = await tk.list_tickets(graph_client, tenant, "ALICE rao")
    assert [(t.id, t.stage) for t in mine] == [("T-new", TicketStage.REPORTED), ("T-old", TicketStage.CLOSED)]
    assert mine[0].customer == "Alice Rao" and mine[0].opened_at == at(60)
    assert [t.id for t in await tk.open_tickets_for(graph_client, tenant, "alice rao")] == ["T-new"]
    assert await tk.list_tickets(graph_client, tenant, "nobody") == []
    with pytest.raises(InvalidInput):
        await tk.list_tickets(graph_client, tenant, limit=0)


# ---------------------------------------------------------------- errors and isolation


async def test_unknown_ticket_is_not_found_and_nothing_is_created(graph_client, tenant):
    await opened(graph_client, tenant)
    before = await counts(graph_client, tenant)
    calls = [
        tk.get_ticket(graph_client, tenant, "T-404"),
        tk.peek_ticket(graph_client, tenant, "T-404"),
        tk.hand_off(graph_client, tenant, "T-404", from_agent="intake", to_role="resolver"),
        tk.claim(graph_client, tenant, "T-404", agent="resolver", replica="r1"),
        tk.release(graph_client, tenant, "T-404", agent="resolver"),
        tk.set_stage(graph_client, tenant, "T-404", stage="fixing", agent="resolver"),
        tk.add_event(graph_client, tenant, "T-404", agent="resolver", event="note"),
        tk.confirm(graph_client, tenant, "T-404", fixed=False, by="alice"),
        tk.record_fix(graph_client, tenant, "T-404", issue_kind="x", steps=["a"], verified=True, agent="r"),
        tk.schedule_visit(graph_client, tenant, "T-404", technician="Ravi", at=T0),
    ]
    for call in calls:
        with pytest.raises(NotFound):
            await call
    assert await counts(graph_client, tenant) == before


async def test_bad_tenant_is_refused(graph_client):
    for bad in ("", "UPPER", "a", "x y", "relay:other", "-lead", None):
        with pytest.raises(InvalidTenant):
            await tk.get_ticket(graph_client, bad, "T-1")
        with pytest.raises(InvalidTenant):
            await tk.open_ticket(graph_client, bad, customer="a", issue_kind="b", summary="c", agent="intake")


async def test_tenants_do_not_see_each_others_tickets_or_procedures(graph_client, tenant):
    other = tenant + "-b"
    await register(graph_client.redis, other)
    await opened(graph_client, tenant)
    await tk.record_fix(graph_client, tenant, "T-1", issue_kind="no internet", steps=RESTART,
                        verified=True, agent="resolver")
    assert await tk.claim(graph_client, tenant, "T-1", agent="resolver", replica="r1")
    with pytest.raises(NotFound):
        await tk.get_ticket(graph_client, other, "T-1")
    with pytest.raises(NotFound):
        await tk.claim(graph_client, other, "T-1", agent="resolver", replica="r2")
    assert await tk.list_tickets(graph_client, other) == []
    assert await tk.list_tickets(graph_client, other, "alice rao") == []
    assert await tk.best_procedures(graph_client, other, "no internet") == []
    # the same ticket id in the other tenant is another ticket with its own owner
    t = await opened(graph_client, other, customer="Someone Else")
    assert t.changed and t.customer == "Someone Else"
    assert await tk.claim(graph_client, other, "T-1", agent="resolver", replica="r2")
    assert (await tk.peek_ticket(graph_client, tenant, "T-1")).owner_replica == "r1"


# ---------------------------------------------------------------- query plans


@pytest.mark.parametrize(
    "query, params",
    [
        (q.CLAIM, {"id": "T-1", "agent": "resolver", "replica": "r1", "take_over": None, "lease_ms": None,
                   "detail": "r1", "customer": None, "now": 1}),
        (q.GET_TICKET, {"id": "T-1"}),
        (q.PEEK_TICKET, {"id": "T-1"}),
        (q.WRITE_STEPS, {"id": "T-1", "stage": "fixing", "agent": "a", "events": ["fixing"], "staff": [None],
                         "customer": [None], "expected": None, "work": None, "now": 1}),
        (q.SET_VISIT_STATUS, {"id": "T-1", "vid": "v", "status": "done", "agent": "a", "at": 1}),
        (q.TICKET_VISITS, {"id": "T-1"}),
        (q.ESCALATION, {"id": "T-1", "eid": "T-1-esc-r0"}),
        (q.HAND_OFF, {"id": "T-1", "giver": "a", "to": "b", "detail": None, "customer": None, "now": 1}),
        (q.CONFIRM, {"id": "T-1", "fixed": False, "target": "reopened", "event": "e", "by": "b", "detail": None,
                     "now": 1}),
        (q.LIST_TICKETS_FOR_CUSTOMER, {"cuid": "Customer|alice rao", "open_only": False, "limit": 10}),
        (q.BEST_PROCEDURES, {"issue": "no internet", "limit": 3}),
        (q.RECORD_FIX, {"id": "T-1", "pid": "p", "issue": "i", "steps": ["a"], "verified": True, "event": "e",
                        "fix_detail": "d", "agent": "a", "now": 1}),
    ],
    ids=lambda v: v.name if hasattr(v, "name") else "",
)
async def test_hot_queries_start_from_an_index(graph_client, tenant, query, params):
    await opened(graph_client, tenant)
    plan = await graph_client.explain(tenant, query, params)
    assert "Index Scan" in plan
    assert "All Node Scan" not in plan and "Label Scan" not in plan
