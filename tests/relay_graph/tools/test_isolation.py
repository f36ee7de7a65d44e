"""A canary written through the tools in one tenant cannot be reached through the tools in another:
not by name, not by id, not by meaning."""

from __future__ import annotations

import json
import uuid

from relay_graph.desk.tickets import store as tickets
from relay_graph.tools import Shape, call_tool
from tests.support import register


async def test_a_canary_in_one_tenant_is_unreachable_through_the_tools_of_another(make_ctx, graph_client):
    a, b = "t-" + uuid.uuid4().hex[:12], "t-" + uuid.uuid4().hex[:12]
    await register(graph_client.redis, a, b)
    secret = "canary-" + uuid.uuid4().hex[:8]
    in_a, in_b = make_ctx(a, "mcp:writer"), make_ctx(b, "mcp:snoop")

    written = await call_tool(in_a, "remember_fact", {"subject": "zara quill", "predicate": "email",
                                                      "object": f"{secret}@example.com"})
    fact_id = written.data.fact_id
    mem = await call_tool(in_a, "remember", {"session": "s-zara", "customer": "zara quill", "turns": [
        {"speaker": "zara quill", "text": f"my secret word is {secret}"}]})
    ticket = await tickets.open_ticket(graph_client, a, customer="zara quill", issue_kind="no internet",
                                       summary=f"ticket with {secret}", agent="intake")
    # tenant a sees it all
    assert (await call_tool(in_a, "recall_customer", {"customer": "zara quill"})).shape is Shape.ANSWERED
    # tenant b has a life of its own
    await call_tool(in_b, "remember_fact", {"subject": "yusuf ali", "predicate": "lives_in", "object": "pune"})

    answers = [
        await call_tool(in_b, "facts_at", {"subject": "zara quill"}),
        await call_tool(in_b, "history", {"subject": "zara quill"}),
        await call_tool(in_b, "claims", {"subject": "zara quill", "predicate": "email"}),
        await call_tool(in_b, "recall_customer", {"customer": "zara quill"}),
        await call_tool(in_b, "explain", {"fact_id": fact_id}),
        await call_tool(in_b, "tickets", {"ticket_id": ticket.id}),
        await call_tool(in_b, "who_handled", {"ticket_id": ticket.id}),
        await call_tool(in_b, "recall", {"q": "what is the secret word?"}),
        await call_tool(in_b, "recall", {"q": "secret word", "subject": "zara quill"}),
        await call_tool(in_b, "ask", {"question": "what is the customer's email address?"}),
        await call_tool(in_b, "tickets", {}),
    ]
    for r in answers[:7] + answers[8:9]:
        assert r.shape is Shape.UNKNOWN_NAME and r.data is None, r
    # what b got back as answers (not the names it asked about, echoed in `unknown`)
    evidence = json.dumps([{"data": r.to_json()["data"], "how": r.how_i_know} for r in answers]).lower()
    for leaked in (secret, fact_id, mem.data.episode_ids[0], ticket.id.lower(), "zara"):
        assert leaked not in evidence
