"""Tasks for any team of agents over HTTP, on a memory-only tenant: open, hand off, one winner of
N racing claims, done, the trail as graph edges, the live feed's announcements, and clear refusals."""

from __future__ import annotations

import asyncio

from relay_graph.runtime.queries import Query
from relay_graph.runtime.streams import STREAM_TASKS
from relay_graph.runtime.streams.wire import from_fields, text_fields

from .helpers import assert_error, create_agent

EDGES = Query("t_task_edges", "MATCH (a:Agent)-[r]->(t:Task {task_id: $id}) RETURN a.name AS agent, type(r) AS kind "
              "ORDER BY r.at_ms", read_only=True)
ABOUT = Query("t_task_about", "MATCH (t:Task {task_id: $id})-[:TASK_ABOUT]->(e:Entity) RETURN e.uid AS uid",
              read_only=True)


async def test_a_task_is_opened_handed_off_claimed_once_and_done(client, tenant, auth, memory):
    planner = await create_agent(client, tenant, auth, "planner")
    crm = await create_agent(client, tenant, auth, "crm-bot")
    base = f"/v1/tenants/{tenant}/tasks"
    r = await client.post(base, json={"title": "call Asha back about her move", "about": "asha rao"}, headers=planner)
    assert r.status_code == 201, r.text
    task = r.json()
    assert (task["state"], task["opened_by"], task["waiting_for"], task["owner"]) == ("open", "planner", None, None)
    r = await client.post(f"{base}/{task['task_id']}/handoff", json={"to": "crm-bot"}, headers=planner)
    assert r.status_code == 200 and r.json()["waiting_for"] == "crm-bot"
    # only the agent it was handed to may take it
    assert_error(await client.post(f"{base}/{task['task_id']}/claim", headers=planner), 409, "state_conflict")
    replicas = [client.post(f"{base}/{task['task_id']}/claim", json={"replica": f"crm-{i}"}, headers=crm)
                for i in range(6)]
    answers = [r.json() for r in await asyncio.gather(*replicas)]
    assert sum(a["won"] for a in answers) == 1
    assert {a["task"]["owner"] for a in answers} == {"crm-bot"}
    assert_error(await client.post(f"{base}/{task['task_id']}/done", headers=planner), 409, "state_conflict")
    r = await client.post(f"{base}/{task['task_id']}/done", headers=crm)
    assert r.status_code == 200 and r.json()["state"] == "done"
    r = await client.get(f"{base}/{task['task_id']}", headers=auth)
    trail = [(s["kind"], s["agent"]) for s in r.json()["trail"]]
    assert trail == [("opened", "planner"), ("handed_off", "planner"), ("picked_up", "crm-bot")]
    rows = await memory.client.run(tenant, EDGES, {"id": task["task_id"]})
    assert [(x["agent"], x["kind"]) for x in rows] == [("planner", "OPENED"), ("planner", "HANDED_OFF"),
                                                        ("crm-bot", "PICKED_UP")]
    listed = (await client.get(base, params={"state": "done", "for": "crm-bot"}, headers=auth)).json()["tasks"]
    assert [t["task_id"] for t in listed] == [task["task_id"]]
    assert (await client.get(base, params={"state": "open"}, headers=auth)).json()["tasks"] == []


async def test_a_task_about_a_known_subject_is_linked_to_it(client, tenant, auth, memory):
    r = await client.post(f"/v1/tenants/{tenant}/facts", headers=auth,
                          json={"subject": "Ravi Kumar", "predicate": "prefers_contact", "object": "email"})
    assert r.status_code == 201, r.text
    r = await client.post(f"/v1/tenants/{tenant}/tasks", json={"title": "send the form", "about": "ravi  KUMAR"},
                          headers=auth)
    task = r.json()
    [row] = await memory.client.run(tenant, ABOUT, {"id": task["task_id"]})
    assert row["uid"] == "Customer|ravi kumar" and task["about_id"] == "Ravi Kumar"
    # a customer's exact name is that customer (the exact-name rule of writes)
    await client.post(f"/v1/tenants/{tenant}/facts", headers=auth,
                      json={"subject": "c-00000000000000e1", "predicate": "name", "object": "Meena Pillai"})
    r = await client.post(f"/v1/tenants/{tenant}/tasks", json={"title": "renew", "about": "meena pillai"},
                          headers=auth)
    assert r.json()["about_id"] == "c-00000000000000e1" and r.json()["about"] == "c-00000000000000e1"


async def test_task_changes_are_announced_for_the_live_feed(client, tenant, auth, stream_redis):
    last = await stream_redis.xrevrange(STREAM_TASKS, count=1)
    since = last[0][0] if last else b"0-0"
    r = await client.post(f"/v1/tenants/{tenant}/tasks", json={"title": "check the invoice", "for": "billing"},
                          headers=auth)
    task_id = r.json()["task_id"]
    entries = await stream_redis.xrange(STREAM_TASKS, min=b"(" + since)
    mine = [from_fields(text_fields(fields)) for _, fields in entries]
    mine = [n for n in mine if n.id == task_id]
    assert [(n.change, n.actor, n.tenant) for n in mine] == [("handed_off", "api", tenant)]
    trail = (await client.get(f"/v1/tenants/{tenant}/tasks/{task_id}", headers=auth)).json()["trail"]
    assert [(s["kind"], s["agent"], s["to"]) for s in trail] == [("opened", "api", None), ("handed_off", "api", "billing")]


async def test_bad_task_requests_are_refused_and_change_nothing(client, tenant, auth):
    base = f"/v1/tenants/{tenant}/tasks"
    assert_error(await client.post(base, json={"title": ""}, headers=auth), 422, "validation_error")
    assert_error(await client.post(base, json={"title": "x", "for": "no spaces allowed"}, headers=auth), 422,
                 "validation_error")
    assert_error(await client.post(f"{base}/task-nope/claim", headers=auth), 404, "not_found")
    assert (await client.get(base, headers=auth)).json()["tasks"] == []
