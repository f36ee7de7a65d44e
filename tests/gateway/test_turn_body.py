"""A turn or note has one body: POST /episodes and the `remember` tool (REST and MCP) take the same
model, and the tool's earlier grouped shape is still read (deprecated, until v2)."""

from __future__ import annotations

from relay_graph.memory.models import TurnInput
from relay_graph.tools import get_tool

TURN = {"session": "s-one", "speaker": "Mel", "text": "We adopted a puppy named Luna!",
        "at": "2026-05-02T09:30:00+00:00", "id": "turn-1", "kind": "Message", "mentions": ["luna"]}


async def test_the_same_turn_is_written_through_either_door(client, tenant, auth):
    r = await client.post(f"/v1/tenants/{tenant}/episodes", json={"episodes": [TURN]}, headers=auth)
    assert r.status_code == 201, r.text
    via_tool = await client.post(f"/v1/tenants/{tenant}/tools/remember",
                                 json={"episodes": [{**TURN, "id": "turn-2", "session": "s-two"}]}, headers=auth)
    assert via_tool.status_code == 200, via_tool.text
    assert via_tool.json()["data"]["sessions"] == ["s-two"]
    found = await client.get(f"/v1/tenants/{tenant}/recall", params={"q": "what is the puppy called?"}, headers=auth)
    assert {i["session"] for i in found.json()["items"]} >= {"s-one", "s-two"}


def test_the_tool_and_the_route_publish_one_turn_model(app):
    route_item = app.openapi()["components"]["schemas"]["EpisodeBody"]["properties"]
    tool_item = get_tool("remember").input_schema()
    tool_turn = tool_item["$defs"]["TurnInput"]["properties"]
    assert set(TurnInput.model_fields) == set(tool_turn) <= set(route_item)


async def test_the_grouped_shape_is_still_read(client, tenant, auth):
    r = await client.post(f"/v1/tenants/{tenant}/tools/remember", headers=auth, json={
        "session": "s-old", "customer": "c-00000000000000a1",
        "turns": [{"speaker": "asha", "text": "my router blinks red"}, {"speaker": "desk", "text": "noted"}]})
    assert r.status_code == 200, r.text
    data = r.json()["data"]
    assert data["sessions"] == ["s-old"] and data["customer"] == "c-00000000000000a1"
    assert len(data["episode_ids"]) == 2
    bad = await client.post(f"/v1/tenants/{tenant}/tools/remember", headers=auth,
                            json={"session": "s-old", "turns": [{"speaker": "asha"}]})
    assert bad.status_code == 422 and "text" in bad.json()["error"]["message"]
