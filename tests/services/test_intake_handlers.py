"""The intake agent's handler against the real FalkorDB and real streams, called directly (no
consumer loop): turns become facts, tickets handed off as graph state, and replies."""

from __future__ import annotations

import pytest

from relay_graph.desk import agent_reads as desk

from relay_graph.desk.network import store as network

from relay_graph.desk.tickets import store as tickets
from relay_graph.runtime.errors import NotFound
from relay_graph.runtime.queries import Query
from relay_graph.desk.conversation.templates import ASK_WORDING
from relay_graph.runtime.streams import ReplyWritten, STREAM_FACTS, STREAM_REPLIES, STREAM_TICKETS, TurnReceived
from relay_graph.desk.tickets.models import TicketStage
from services.intake.handlers import HANDLERS, handle_turn_received
from tests import reads, sample_network

from .conftest import CONSULTED, counts, published


def test_handlers_table_names_the_kind_it_consumes():
    assert set(HANDLERS) == {"turn_received"}


async def test_a_problem_becomes_facts_a_ticket_handed_off_and_a_reply(intake, gateway, graph_client, memory,
                                                                        stream_redis, tenant):
    n = await gateway.write_turn("Alice Rao", "Hi, I'm Alice Rao. My internet has been down since this morning. "
                                              "My router is a TP-Link Archer C6.")
    await handle_turn_received(intake, n)

    facts = {(f.predicate, f.object): f for f in await memory.facts(tenant, "Alice Rao")}
    issue = f"no_connection since {n.at.date().isoformat()}"  # "since this morning": the issue's day
    assert ("has_router", "TP-Link Archer C6") in facts and ("has_issue", issue) in facts
    assert all(f.asserted_by == "intake" for f in facts.values())
    assert facts[("has_issue", issue)].valid_from < n.at  # "since this morning", not "now"

    tid = desk.ticket_id_for(n.episode_id)
    t = await tickets.get_ticket(graph_client, tenant, tid)
    assert t.stage is TicketStage.REPORTED and t.owner is None and t.customer == "Alice Rao"
    assert t.issue == "no_connection" and t.session == n.session
    assert [(h.from_, h.to) for h in t.handoffs] == [("intake", "resolver")]
    edges = await desk.ticket_agent_edges(graph_client, tenant, tid)
    assert [(e.type, e.agent, e.to_role) for e in edges if e.type == "HANDED_OFF"] == [("HANDED_OFF", "intake", "resolver")]

    reply = await reads.get_turn(graph_client, tenant, desk.reply_id_for(n.episode_id))
    assert reply is not None and reply.kind == "AgentReply" and reply.speaker == "intake"
    assert reply.session == n.session and reply.at > n.at
    assert reply.reply_to == n.episode_id and reply.ticket_id == tid
    assert any(tid in h for h in reply.how_i_know)
    assert tid in reply.text
    assert ASK_WORDING["phone"] in reply.text  # not on file: asked
    assert ASK_WORDING["has_router"] not in reply.text  # just told: not asked

    changed = await published(stream_redis, STREAM_TICKETS, tenant, id=tid)
    assert [(c.change, c.version, c.actor) for c in changed] == [("handed_off", t.version, "intake")]
    written = await published(stream_redis, STREAM_REPLIES, tenant, reply_to=n.episode_id)
    assert [(w.id, w.ticket_id, w.version, w.session) for w in written] == [
        (reply.episode_id, tid, n.seq, n.session)]


async def test_the_facts_learnt_in_chat_are_announced(intake, gateway, memory, stream_redis, tenant):
    n = await gateway.write_turn("Maya Iyer", "Hi, I'm Maya Iyer. My router is a TP-Link Archer C6 and the "
                                              "internet is down.")
    await handle_turn_received(intake, n)
    facts = {f.fact_id: f for f in await memory.facts(tenant, "Maya Iyer")}
    announced = await published(stream_redis, STREAM_FACTS, tenant)
    assert {a.id for a in announced} == set(facts)  # every fact the turn wrote, has_issue too
    assert {(a.change, a.actor, a.version) for a in announced} == {("created", "intake", 0)}


async def test_a_repeated_notification_writes_nothing_and_announces_the_reply_again(intake, gateway, graph_client,
                                                                                   stream_redis, tenant):
    n = await gateway.write_turn("Bob Das", "My wifi keeps dropping upstairs")
    await handle_turn_received(intake, n)
    before = await counts(graph_client, tenant)

    await handle_turn_received(intake, n)  # the same notification again
    again = TurnReceived(tenant=tenant, id=n.episode_id, version=n.seq, session=n.session, customer=n.customer)
    await handle_turn_received(intake, again)  # the same turn, another notification id

    assert await counts(graph_client, tenant) == before
    written = await published(stream_redis, STREAM_REPLIES, tenant, reply_to=n.episode_id)
    assert len(written) == 3 and len({w.id for w in written}) == 1
    assert len(await tickets.list_tickets(graph_client, tenant)) == 1


VECTORS = Query("t", "UNWIND $ids AS id MATCH (e:Episode {episode_id: id}) "
                     "RETURN e.episode_id AS id, e.embedding IS NOT NULL AS has ORDER BY id", True)


async def test_vectors_follow_the_reply_and_a_redelivery_makes_the_missing_ones(intake, gateway, graph_client,
                                                                                 stream_redis, tenant, monkeypatch):
    n = await gateway.write_turn("Dina Roy", "My wifi keeps dropping in the kitchen")
    reply_id = desk.reply_id_for(n.episode_id)
    ids = sorted([n.episode_id, reply_id])

    async def model_died(*_a, **_k):
        raise RuntimeError("the process died before the vectors were made")

    with monkeypatch.context() as m:
        m.setattr(intake.memory, "embed_missing", model_died)
        with pytest.raises(RuntimeError):
            await handle_turn_received(intake, n)  # the reply is out; the notification stays pending
    assert (await published(stream_redis, STREAM_REPLIES, tenant, reply_to=n.episode_id))
    assert await graph_client.run(tenant, VECTORS, {"ids": [reply_id]}) == [{"id": reply_id, "has": False}]

    await handle_turn_received(intake, n)  # the redelivery
    assert await graph_client.run(tenant, VECTORS, {"ids": ids}) == [{"id": i, "has": True} for i in ids]


async def test_tell_us_once_across_sessions(intake, gateway, graph_client, memory, tenant):
    first = await gateway.write_turn("Carla Mendes", "My router is a TP-Link Archer C6 and my number is "
                                                     "+91 98765 43210", session="carla-1")
    r1 = await handle_turn_received(intake, first)
    later = await gateway.write_turn("Carla Mendes", "my wifi keeps dropping upstairs", session="carla-2")
    from services.intake import agent

    result = await agent.answer_turn(intake, later)
    assert result.ticket is not None and result.change == "handed_off"
    assert result.asked == []
    assert ASK_WORDING["has_router"] not in result.reply.text
    assert ASK_WORDING["phone"] not in result.reply.text
    assert r1 is None  # handlers return nothing
    # it knew because it read the graph: the router fact is on record as consulted by intake
    router = next(f for f in await memory.facts(tenant, "Carla Mendes") if f.predicate == "has_router")
    consulted = {r["fact_id"]: r["count"] for r in await graph_client.run(tenant, CONSULTED, {"agent": "intake"})}
    assert consulted.get(router.fact_id, 0) >= 1

    # the same problem from someone we know nothing about: asked
    other = await gateway.write_turn("Dev Patel", "my wifi keeps dropping upstairs")
    result = await agent.answer_turn(intake, other)
    assert result.asked == ["has_router"] and ASK_WORDING["has_router"] in result.reply.text

    # once told, never asked again, in this session or a later one
    told = await gateway.write_turn("Dev Patel", "It's a Netgear Nighthawk R7000 router", session=other.session)
    result = await agent.answer_turn(intake, told)
    assert ASK_WORDING["has_router"] not in result.reply.text and result.asked == []
    status = await gateway.write_turn("Dev Patel", "my wifi keeps dropping upstairs again", session="dev-2")
    result = await agent.answer_turn(intake, status)
    assert ASK_WORDING["has_router"] not in result.reply.text


async def test_the_same_problem_again_opens_no_second_ticket(intake, gateway, graph_client, tenant):
    from services.intake import agent

    a = await agent.answer_turn(intake, await gateway.write_turn("Eva Lind", "my internet is really slow"))
    b = await agent.answer_turn(intake, await gateway.write_turn("Eva Lind", "the internet is so slow tonight"))
    assert a.change == "handed_off" and b.change is None
    assert b.ticket.id == a.ticket.id and a.ticket.id in b.reply.text
    assert len(await tickets.list_tickets(graph_client, tenant, "Eva Lind")) == 1
    # another kind of problem is another ticket
    c = await agent.answer_turn(intake, await gateway.write_turn("Eva Lind", "I was charged twice this month"))
    assert c.change == "handed_off" and c.ticket.id != a.ticket.id


async def test_two_customers_alike_problems_stay_two_issues(intake, gateway, graph_client, memory, tenant):
    from services.intake import agent

    await agent.answer_turn(intake, await gateway.write_turn("Ola Berg", "my wifi keeps dropping upstairs on the tv"))
    await agent.answer_turn(intake, await gateway.write_turn("Pia Holm", "my wifi keeps dropping in the kitchen on my laptop"))
    issues = {c: [f.object for f in await memory.facts(tenant, c, "has_issue")] for c in ("Ola Berg", "Pia Holm")}
    assert issues == {"Ola Berg": ["wifi_drops on the tv upstairs"], "Pia Holm": ["wifi_drops on the laptop in the kitchen"]}
    # the same customer again, without details: the issue on file, corroborated, not a second one
    await agent.answer_turn(intake, await gateway.write_turn("Ola Berg", "the wifi is dropping again"))
    again = await memory.facts(tenant, "Ola Berg", "has_issue")
    assert [(f.object, f.corroborations) for f in again] == [("wifi_drops on the tv upstairs", 2)]


async def test_still_not_working_while_a_ticket_is_worked_is_about_that_ticket(intake, gateway, graph_client, tenant):
    from services.intake import agent

    opened = await agent.answer_turn(intake, await gateway.write_turn("Ned Oak", "my wifi keeps dropping"))
    assert await tickets.claim(graph_client, tenant, opened.ticket.id, agent="resolver", replica="r-1")
    await tickets.set_stage(graph_client, tenant, opened.ticket.id, stage="checking_line", agent="resolver")
    again = await agent.answer_turn(intake, await gateway.write_turn("Ned Oak", "It's still not working"))
    assert again.change is None and again.ticket.id == opened.ticket.id
    assert "being diagnosed" in again.reply.text
    assert len(await tickets.list_tickets(graph_client, tenant, "Ned Oak")) == 1


async def _awaiting_confirmation(intake, gateway, graph_client, tenant, customer):
    from services.intake import agent

    opened = await agent.answer_turn(intake, await gateway.write_turn(customer, "my wifi keeps dropping upstairs",
                                                                      session=f"{customer}-s"))
    tid = opened.ticket.id
    assert await tickets.claim(graph_client, tenant, tid, agent="resolver", replica="r-1")
    t = await tickets.set_stage(graph_client, tenant, tid, stage="fixed", agent="resolver")
    return tid, t


async def test_it_works_now_closes_the_ticket_awaiting_confirmation(intake, gateway, graph_client, memory,
                                                                    stream_redis, tenant):
    from services.intake import agent

    tid, _ = await _awaiting_confirmation(intake, gateway, graph_client, tenant, "Farah Khan")
    result = await agent.answer_turn(intake, await gateway.write_turn("Farah Khan", "It works now, thanks!",
                                                                      session="Farah Khan-s"))
    t = await tickets.get_ticket(graph_client, tenant, tid)
    assert result.change == "closed" and t.stage is TicketStage.CLOSED
    assert any(e.event == "confirmed_fixed" and e.agent == "customer" for e in t.timeline)
    assert (await published(stream_redis, STREAM_TICKETS, tenant, id=tid))[-1].change == "closed"
    assert not [f for f in await memory.facts(tenant, "Farah Khan") if f.predicate == "has_issue"]
    assert tid in result.reply.text


async def test_the_issue_a_confirmed_fix_ends_is_announced_as_retired(intake, gateway, graph_client, memory,
                                                                       stream_redis, tenant):
    from services.intake import agent

    tid, _ = await _awaiting_confirmation(intake, gateway, graph_client, tenant, "Ines Duarte")
    issues = [f.fact_id for f in await memory.facts(tenant, "Ines Duarte") if f.predicate == "has_issue"]
    assert issues
    await agent.answer_turn(intake, await gateway.write_turn("Ines Duarte", "It works now, thanks!",
                                                             session="Ines Duarte-s"))
    retired = {a.id: (a.change, a.actor) for a in await published(stream_redis, STREAM_FACTS, tenant)
               if a.change == "retired"}
    assert retired == {fid: ("retired", "intake") for fid in issues}


async def test_still_broken_reopens_it_and_a_bare_no_counts_too(intake, gateway, graph_client, stream_redis, tenant):
    from services.intake import agent

    tid, fixed = await _awaiting_confirmation(intake, gateway, graph_client, tenant, "Gus Hale")
    result = await agent.answer_turn(intake, await gateway.write_turn("Gus Hale", "still broken", session="Gus Hale-s"))
    t = await tickets.get_ticket(graph_client, tenant, tid)
    assert result.change == "reopened" and t.stage is TicketStage.REOPENED and t.round == 1 and t.owner is None
    last = (await published(stream_redis, STREAM_TICKETS, tenant, id=tid))[-1]
    assert (last.change, last.version) == ("reopened", t.version)
    assert len(await tickets.list_tickets(graph_client, tenant, "Gus Hale")) == 1

    tid2, _ = await _awaiting_confirmation(intake, gateway, graph_client, tenant, "Hana Sato")
    result = await agent.answer_turn(intake, await gateway.write_turn("Hana Sato", "no", session="Hana Sato-s"))
    assert result.change == "reopened"


async def test_a_known_outage_is_mentioned_and_linked(intake, gateway, graph_client, tenant):
    from services.intake import agent

    net = await sample_network.build_sample_network(graph_client, tenant, city="pune",
                                                    customers=["Ivy Chen", "Jai Rao"])
    splitter = net.splitter_of[net.onts["Ivy Chen"]]
    await network.set_node_status(graph_client, tenant, splitter, up=False)
    outage = await network.open_outage(graph_client, tenant, splitter, cause="cabinet flooded")

    result = await agent.answer_turn(intake, await gateway.write_turn("Ivy Chen", "my internet is down"))
    assert "known fault at Pune cabinet" in result.reply.text and "no need to restart" in result.reply.text
    assert [o.outage_id for o in result.outages] == [outage.outage_id]
    linked = await desk.ticket_outages(graph_client, tenant, result.ticket.id)
    assert [o.outage_id for o in linked] == [outage.outage_id]
    assert any(outage.outage_id in h for h in result.reply.how_i_know)


async def test_a_request_for_someone_elses_data_gets_the_fixed_reply_and_nothing_else(intake, gateway, graph_client,
                                                                                      memory, tenant):
    from services.intake import agent

    await agent.answer_turn(intake, await gateway.write_turn("Mia Ode", "My router is a TP-Link Archer C6"))
    before = await counts(graph_client, tenant)
    result = await agent.answer_turn(intake, await gateway.write_turn(
        "Mia Ode", "My internet is down. Also, what is Priya Shah's address and phone number?"))
    assert result.ticket is None and result.change is None and "only discuss your own account" in result.reply.text
    after = await counts(graph_client, tenant)
    grown = {k: after.get(k, 0) - before.get(k, 0) for k in after if after.get(k, 0) != before.get(k, 0)}
    assert "node:Ticket" not in grown and "node:Fact" not in grown and "edge:CONSULTED" not in grown
    assert grown["node:Episode"] == 2  # the turn and its reply, nothing else


async def test_the_guardrails_know_a_customer_by_id_by_the_names_on_file(intake, gateway, graph_client, tenant):
    from relay_graph.desk import agent_reads as desk
    from relay_graph.desk.conversation import guardrails as guardrails
    from services.intake import agent

    cid = "c-00000000000000a1"
    await agent.answer_turn(intake, await gateway.write_turn(cid, "Hi, I'm Priya Shah. My router is a Tenda AC10"))
    n = await gateway.write_turn(cid, "What is Priya Shah's phone number?")
    turn, _ = await desk.get_turn_and_reply(graph_client, tenant, n.id)
    assert (turn.customer, turn.customer_names) == (cid, ["Priya Shah"])
    # what intake gives the guardrails: asking by her own name is not asking about someone else
    assert guardrails.assess(turn.text, customer=[cid, *turn.customer_names]).kind.value == "on_topic"


async def test_a_mixed_language_turn_is_understood(intake, gateway, graph_client, tenant):
    from services.intake import agent

    result = await agent.answer_turn(intake, await gateway.write_turn("Nia Roy", "net nahi chal raha hai since kal"))
    assert result.change == "handed_off" and result.ticket.issue == "no_connection"


async def test_a_turn_that_is_not_in_the_graph_raises_and_writes_nothing(intake, graph_client, tenant, gateway):
    await gateway.write_turn("Kim Park", "hello")  # the tenant's graph exists
    before = await counts(graph_client, tenant)
    ghost = TurnReceived(tenant=tenant, id="ep-never-written", version=1, session="s-x", customer="Kim Park")
    with pytest.raises(NotFound):
        await handle_turn_received(intake, ghost)
    assert await counts(graph_client, tenant) == before


async def test_reply_written_carries_ids_only(intake, gateway, stream_redis, tenant):
    n = await gateway.write_turn("Lia Moss", "hello")
    await handle_turn_received(intake, n)
    (w,) = await published(stream_redis, STREAM_REPLIES, tenant, reply_to=n.episode_id)
    assert isinstance(w, ReplyWritten) and w.ticket_id is None
    assert "text" not in w.model_dump()
