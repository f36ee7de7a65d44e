"""POST /chat over the real graph and the real streams: the turn is stored, numbered and announced;
with `wait`, the reply an agent writes comes back (the agent here is a small in-test stand-in for
intake that consumes the turns stream through the real consumer runtime)."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from datetime import datetime, timezone

import pytest

from relay_graph.desk.conversation import turns as chat

from relay_graph.desk.tickets import store as tickets
from relay_graph.memory.entities import is_customer_id
from relay_graph.memory.models import EpisodeInput
from relay_graph.runtime.streams import (
    STREAM_FACTS,
    STREAM_REPLIES,
    STREAM_TURNS,
    StreamApp,
    Publisher,
    ReplyWritten,
    StreamSettings,
    TurnReceived,
)
from tests import reads, statements

from .helpers import assert_error, bearer, create_tenant
from .stream_helpers import published


@pytest.fixture
def base(tenant) -> str:
    return f"/v1/tenants/{tenant}"


async def test_the_name_a_first_turn_gives_is_announced_as_a_fact(client, base, auth, tenant, memory, stream_redis):
    r = await client.post(f"{base}/chat", json={"name": "Omar Haddad", "text": "hello"}, headers=auth)
    assert r.status_code == 202, r.text
    [fact] = await memory.facts(tenant, r.json()["customer"])
    announced = await published(stream_redis, STREAM_FACTS, tenant)
    assert [(n.id, n.change, n.actor, n.version) for n in announced] == [(fact.fact_id, "created", "gateway", 0)]


async def test_a_turn_is_stored_numbered_and_announced(client, base, auth, tenant, memory, stream_redis):
    # a first turn names no customer: one is made, with the name they gave as a fact about them
    r = await client.post(f"{base}/chat", json={"name": "Alice Rao", "text": "my internet is down"},
                          headers=auth)
    assert r.status_code == 202, r.text
    body = r.json()
    assert set(body) == {"session", "episode_id", "customer"}
    session, first, customer = body["session"], body["episode_id"], body["customer"]
    assert session.startswith("s-") and len(session) == 2 + 32
    assert is_customer_id(customer)
    assert [(f.predicate, f.object) for f in await memory.facts(tenant, customer)] == [("name", "Alice Rao")]

    r = await client.post(f"{base}/chat", json={"customer": customer, "text": "still down", "session": session},
                          headers=auth)
    assert r.status_code == 202, r.text
    assert (r.json()["session"], r.json()["customer"]) == (session, customer)
    second = r.json()["episode_id"]

    turns = await published(stream_redis, STREAM_TURNS, tenant)
    assert [(n.id, n.seq, n.session, n.customer, n.actor) for n in turns] == [
        (first, 1, session, customer, "customer"),
        (second, 2, session, customer, "customer"),
    ]
    assert all(isinstance(n, TurnReceived) for n in turns)

    # In the graph: customer messages, written by the gateway, in the customer's session, numbered.
    ep = await reads.get_episode(memory.client, tenant, first)
    assert ep["kind"] == "CustomerMessage" and "CustomerMessage" in ep["labels"]
    assert ep["speaker"] == customer and ep["session"] == session
    assert [await reads.turn_seq(memory.client, tenant, e) for e in (first, second)] == [1, 2]
    assert await reads.customer_of_session(memory.client, tenant, session) is not None


async def test_two_customers_of_one_name_are_two_customers(client, base, auth, tenant, memory):
    ids = []
    for text in ("my wifi is slow", "no internet at all"):
        r = await client.post(f"{base}/chat", json={"name": "Priya Raman", "text": text}, headers=auth)
        assert r.status_code == 202, r.text
        ids.append(r.json()["customer"])
    assert len(set(ids)) == 2
    # each one's session is their own: the other cannot post into it
    r = await client.post(f"{base}/chat", json={"customer": ids[0], "text": "hello"}, headers=auth)
    s0 = r.json()["session"]
    r = await client.post(f"{base}/chat", json={"customer": ids[1], "text": "hi", "session": s0}, headers=auth)
    assert_error(r, 409, "session_conflict")
    found = (await client.get(f"{base}/customers", params={"name": "priya  RAMAN"}, headers=auth)).json()
    assert sorted(c["id"] for c in found["customers"]) == sorted(ids)
    assert found["matched"] is None and found["ambiguous"] is None


async def test_a_name_with_a_customer_id_is_refused_and_writes_nothing(client, base, auth, tenant, memory):
    r = await client.post(f"{base}/chat", json={"customer": "c-0123456789abcdef", "name": "Asha Rao", "text": "hi"},
                          headers=auth)
    assert r.status_code in (400, 422), r.text
    assert not await memory.client.graph_exists(tenant) or not await memory.facts(tenant, "c-0123456789abcdef")
    r = await client.post(f"{base}/chat", json={"name": "x" * 3 + "\u0000", "text": "hi"}, headers=auth)
    assert r.status_code in (400, 422), r.text


async def test_concurrent_turns_of_one_session_get_distinct_numbers(client, base, auth, tenant, stream_redis):
    r = await client.post(f"{base}/chat", json={"customer": "bob iyer", "text": "hello"}, headers=auth)
    session = r.json()["session"]
    answers = await asyncio.gather(*(
        client.post(f"{base}/chat", json={"customer": "bob iyer", "text": f"message {i}", "session": session},
                    headers=auth)
        for i in range(6)
    ))
    assert [a.status_code for a in answers] == [202] * 6
    seqs = sorted(n.seq for n in await published(stream_redis, STREAM_TURNS, tenant))
    assert seqs == list(range(1, 8))


@contextlib.asynccontextmanager
async def fake_intake(graph_settings, memory, tenant: str, *, ticket: bool = True):
    """Answers `tenant`'s turns the way intake does: a reply episode (reply_to the turn, a ticket,
    how_i_know), then ReplyWritten. Its own group starts at the end of the stream."""
    from relay_graph.runtime.streams import connect

    redis = connect(graph_settings)
    group = "fake-intake-" + uuid.uuid4().hex[:8]
    await redis.xgroup_create(STREAM_TURNS, group, id="$", mkstream=True)
    publisher = Publisher(redis)
    seen: list[TurnReceived] = []

    async def on_turn(n: TurnReceived) -> None:
        if n.tenant != tenant:
            return
        seen.append(n)
        ticket_id = None
        if ticket:
            t = await tickets.open_ticket(memory.client, tenant, customer=n.customer, issue_kind="no internet",
                                          summary="line down", agent="intake", session=n.session,
                                          ticket_id="T-" + n.id[-10:].upper())
            ticket_id = t.id
        reply_id = "r-" + n.id
        await memory.write_episodes(tenant, [EpisodeInput(
            session=n.session, speaker="intake", text="Sorry about that: I opened a ticket and a technician "
            "is checking your line.", at=datetime.now(timezone.utc), id=reply_id, kind="AgentReply",
            agent="intake", customer=n.customer, reply_to=n.id, ticket_id=ticket_id,
            how_i_know=[x for x in (ticket_id, "fact:f-123") if x])])
        await publisher.publish(ReplyWritten(tenant=tenant, id=reply_id, session=n.session, reply_to=n.id,
                                             ticket_id=ticket_id, version=n.seq, actor="intake"))

    consumer = StreamApp(redis, group=group, handlers={TurnReceived: on_turn},
                        settings=StreamSettings(block_ms=50))
    task = asyncio.create_task(consumer.run())
    try:
        await asyncio.wait_for(consumer.ready.wait(), 10)
        yield seen
    finally:
        consumer.stop()
        await asyncio.wait_for(task, 30)
        await redis.xgroup_destroy(STREAM_TURNS, group)
        await redis.aclose()


async def test_wait_returns_the_reply_with_how_i_know_and_ticket(client, base, auth, tenant, memory,
                                                                 graph_settings):
    async with fake_intake(graph_settings, memory, tenant) as seen:
        r = await client.post(f"{base}/chat", params={"wait": 20},
                              json={"customer": "alice rao", "text": "no internet since this morning"}, headers=auth)
    assert r.status_code == 200, r.text
    body = r.json()
    turn_id = body["episode_id"]
    ticket_id = "T-" + turn_id[-10:].upper()
    assert set(body) == {"session", "episode_id", "customer", "reply", "ticket"}
    assert body["reply"] == {"text": "Sorry about that: I opened a ticket and a technician is checking your line.",
                             "how_i_know": [ticket_id, "fact:f-123"], "answers": [],
                             "sources": [ticket_id]}  # an id alone says nothing to a customer
    assert body["ticket"] == {"id": ticket_id, "stage": "reported"}
    assert [n.id for n in seen] == [turn_id]
    # The reply episode keeps what it answers (written through the episodes module).
    reply = await reads.get_reply(memory.client, tenant, "r-" + turn_id)
    assert reply.reply_to == turn_id and reply.ticket_id == ticket_id and reply.kind == "AgentReply"


async def test_wait_without_a_ticket_gives_ticket_null(client, base, auth, tenant, memory, graph_settings):
    async with fake_intake(graph_settings, memory, tenant, ticket=False):
        r = await client.post(f"{base}/chat", params={"wait": 20},
                              json={"customer": "chen li", "text": "what plans do you have?"}, headers=auth)
    assert r.status_code == 200, r.text
    assert r.json()["ticket"] is None
    assert r.json()["reply"]["how_i_know"] == ["fact:f-123"]


async def test_a_reply_in_another_tenant_does_not_answer_this_turn(client, base, auth, tenant, stream_redis,
                                                                    memory):
    # Another tenant's ReplyWritten naming this turn's id must not resolve the wait.
    other = tenant + "-b"
    await create_tenant(client, other)
    r = await client.post(f"{base}/chat", json={"customer": "dana", "text": "hi"}, headers=auth)
    session = r.json()["session"]
    publisher = Publisher(stream_redis)
    # A readable reply in this tenant's graph, so that a wait resolved by the wrong tenant's
    # notification would answer 200 with it.
    fake_id = "r-fake-" + uuid.uuid4().hex[:8]
    await memory.write_episodes(tenant, [EpisodeInput(
        session=session, speaker="intake", text="not your answer", at=datetime.now(timezone.utc), id=fake_id,
        kind="AgentReply", agent="intake", customer="dana")])

    async def impostor() -> None:
        # Answers, in the wrong tenant, each turn this tenant announces.
        answered: set[str] = set()
        for _ in range(500):
            for n in await published(stream_redis, STREAM_TURNS, tenant):
                if n.id not in answered:
                    answered.add(n.id)
                    await publisher.publish(ReplyWritten(tenant=other, id=fake_id, session=n.session,
                                                         reply_to=n.id, actor="intake"))
            await asyncio.sleep(0.02)

    task = asyncio.create_task(impostor())
    try:
        r = await client.post(f"{base}/chat", params={"wait": 1.5},
                              json={"customer": "dana", "text": "hello?", "session": session}, headers=auth)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert r.status_code == 202, r.text
    assert r.json()["note"]
    turn_id = r.json()["episode_id"]
    impostors = [n for n in await published(stream_redis, STREAM_REPLIES, other) if n.reply_to == turn_id]
    assert impostors, "the other tenant's reply was published (so the wait really ignored it)"


async def test_wait_times_out_with_202_and_a_note(client, base, auth, tenant, memory):
    r = await client.post(f"{base}/chat", params={"wait": 0.3}, json={"customer": "erin", "text": "hello"},
                          headers=auth)
    assert r.status_code == 202, r.text
    body = r.json()
    assert set(body) == {"session", "episode_id", "customer", "note"}
    assert "still" in body["note"]
    assert await reads.turn_seq(memory.client, tenant, body["episode_id"]) == 1


@pytest.mark.parametrize("payload,params", [
    ({"customer": "", "text": "hi"}, {}),
    ({"customer": "x" * 201, "text": "hi"}, {}),
    ({"customer": "!!!", "text": "hi"}, {}),
    ({"customer": "alice\x00rao", "text": "hi"}, {}),
    ({"customer": "alice", "text": "   "}, {}),
    ({"customer": "alice", "text": ""}, {}),
    ({"customer": "alice", "text": "hi", "session": ""}, {}),
    ({"customer": "alice", "text": "hi", "session": "x" * 129}, {}),
    ({"customer": "alice", "text": "hi", "agent": "intake"}, {}),
    ({"customer": {"name": "alice"}, "text": "hi"}, {}),
    ({"customer": "alice", "text": "hi"}, {"wait": 31}),
    ({"customer": "alice", "text": "hi"}, {"wait": -1}),
    ({"customer": "alice", "name": "Alice Rao", "text": "hi"}, {}),  # a name is for a new customer only
    ({"name": "alice\x00rao", "text": "hi"}, {}),
    ({"name": "", "text": "hi"}, {}),
])
async def test_bad_input_is_422_and_changes_nothing(client, base, auth, tenant, stream_redis, memory, payload,
                                                    params):
    r = await client.post(f"{base}/chat", json=payload, params=params, headers=auth)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["code"] in ("validation_error", "invalid_value", "invalid_input")
    assert await published(stream_redis, STREAM_TURNS, tenant) == []


async def test_another_customers_session_is_refused(client, base, auth, tenant, stream_redis):
    r = await client.post(f"{base}/chat", json={"customer": "alice rao", "text": "hi"}, headers=auth)
    session = r.json()["session"]
    r = await client.post(f"{base}/chat", json={"customer": "mallory", "text": "what did alice say?",
                                                "session": session}, headers=auth)
    assert_error(r, 409, "session_conflict")
    assert len(await published(stream_redis, STREAM_TURNS, tenant)) == 1


async def test_chat_needs_the_tenants_key(client, base, tenant, auth):
    body = {"customer": "alice", "text": "hi"}
    assert_error(await client.post(f"{base}/chat", json=body), 401, "unauthorized")
    other = await create_tenant(client, tenant + "-x")
    assert_error(await client.post(f"{base}/chat", json=body, headers=other), 403, "forbidden")
    assert_error(await client.post(f"{base}/chat", json=body, headers=bearer("nope")), 401, "unauthorized")


async def test_chat_queries_start_from_an_index(memory, tenant):
    from relay_graph.desk.queries import chat as q

    for query, params in ((q.SESSION_OWNERS, {"session": "s-1"}), (q.ASSIGN_SEQ, {"id": "t-1", "session": "s-1"}),
                          (statements.TURN_SEQ, {"id": "t-1"}), (statements.REPLY, {"id": "r-1"}),
                          (q.REPLY_AND_TICKET, {"id": "r-1", "ticket_id": "T-1"})):
        plan = await memory.client.explain(tenant, query, params)
        assert "Index Scan" in plan, (query.name, plan)
        assert "Label Scan" not in plan, (query.name, plan)


async def test_the_reply_and_its_tickets_stage_are_read_together(memory, tenant):
    await tickets.open_ticket(memory.client, tenant, customer="Ann Bell", issue_kind="no_connection",
                              summary="down", agent="intake", ticket_id="T-ABC")
    at = datetime.now(timezone.utc)
    await memory.write_episodes(tenant, [
        EpisodeInput(session="s-1", speaker="intake", text="ticket T-ABC is open", at=at, id="r-1",
                     kind="AgentReply", agent="intake", customer="Ann Bell", reply_to="t-1", ticket_id="T-ABC",
                     how_i_know=["ticket T-ABC"]),
        EpisodeInput(session="s-1", speaker="intake", text="hello again", at=at, id="r-2", kind="AgentReply",
                     agent="intake", customer="Ann Bell", reply_to="t-2"),
    ])
    reply, ticket = await chat.get_reply_and_ticket(memory.client, tenant, "r-1")
    assert (reply.text, reply.reply_to, reply.how_i_know) == ("ticket T-ABC is open", "t-1", ["ticket T-ABC"])
    assert ticket == ("T-ABC", "reported")
    # no ticket of its own: the one the notification named, if this tenant has it
    assert (await chat.get_reply_and_ticket(memory.client, tenant, "r-2"))[1] is None
    assert (await chat.get_reply_and_ticket(memory.client, tenant, "r-2", "T-ABC"))[1] == ("T-ABC", "reported")
    assert (await chat.get_reply_and_ticket(memory.client, tenant, "r-2", "T-NOPE"))[1] is None
    assert await chat.get_reply_and_ticket(memory.client, tenant, "nope") == (None, None)
