"""A fresh tenant made through the API, with its default world: a customer who says where they live
in chat is on a line from home to core, a blind lab fault on it is diagnosed by the resolver, and
the network's capacity answers for their home box. The real app over ASGI, the real intake and
resolver handlers under the real consumer runtime (this test's event loop), real FalkorDB and
streams; nothing of the world is seeded by the test."""

from __future__ import annotations

import asyncio
import uuid

from relay_graph.desk.tickets import store as tickets
from services.intake.bootstrap import bootstrap as intake_bootstrap
from services.intake.handlers import HANDLERS as INTAKE
from services.intake.settings import IntakeSettings
from services.resolver.bootstrap import bootstrap as resolver_bootstrap
from services.resolver.handlers import HANDLERS as RESOLVER
from services.resolver.settings import ResolverSettings

from .helpers import ADMIN, bearer
from .test_tracing import GUARD_S, eventually, start_agent

DONE = ("fixed", "technician_dispatched")


async def test_a_fresh_tenants_customer_is_placed_measured_and_diagnosed(
        client, tenant, memory, graph_settings, graph_client, stream_redis, monkeypatch):
    monkeypatch.delenv("GROQ_API_KEY", raising=False)  # rules mode, the default
    made = await client.post("/v1/tenants", json={"tenant": tenant}, headers=ADMIN)
    assert made.status_code == 201, made.text
    assert made.json()["world"]["region"] == "india"
    auth = bearer(made.json()["api_key"])
    base = f"/v1/tenants/{tenant}"
    run = uuid.uuid4().hex[:6]
    agents = [
        await start_agent("intake", intake_bootstrap, IntakeSettings, INTAKE, graph_settings, memory,
                          stream_redis, run),
        await start_agent("resolver", resolver_bootstrap, ResolverSettings, RESOLVER, graph_settings, memory,
                          stream_redis, run),
    ]
    tasks = [asyncio.create_task(c.run()) for c, _, _ in agents]
    try:
        await asyncio.wait_for(asyncio.gather(*(c.ready.wait() for c, _, _ in agents)), GUARD_S)
        r = await client.post(f"{base}/chat", params={"wait": 30}, headers=auth,
                              json={"name": "Meera Iyer", "text": "Hi, I'm Meera Iyer and I live in Chennai."})
        assert r.status_code == 200, r.text
        customer = r.json()["customer"]
        assert "found your line" in r.json()["reply"]["text"], r.json()["reply"]["text"]

        line = (await client.get(f"{base}/customers/{customer}/line", headers=auth)).json()["line"]
        assert line[0]["kind"] == "Ont" and line[-1]["kind"] == "Backbone", line  # home to core
        home = line[0]["node_id"]

        # a blind fault (the lab picks the kind), then her complaint: the resolver measures and diagnoses
        fault = await client.post(f"{base}/lab/faults", json={"customer": customer}, headers=auth)
        assert fault.status_code == 201, fault.text
        r = await client.post(f"{base}/chat", params={"wait": 30}, headers=auth,
                              json={"customer": customer, "text": "My internet is not working properly since this "
                                                                  "morning."})
        assert r.status_code == 200 and r.json()["ticket"], r.text
        tid = r.json()["ticket"]["id"]

        async def worked():
            t = (await client.get(f"{base}/tickets/{tid}", headers=auth)).json()
            return t if t.get("stage") in DONE else None

        await eventually(worked, "the resolver finishing the ticket")
        board = (await client.get(f"{base}/lab/scoreboard", headers=auth)).json()
        (row,) = [x for x in board["rows"] if x["customer"] == customer]
        assert row["diagnosed_right"], row

        cap = await client.get(f"{base}/network/capacity", params={"node": home}, headers=auth)
        assert cap.status_code == 200, cap.text
        assert cap.json()["node"] == home
        assert await tickets.unproven_fixes(graph_client, tenant) == {}
    finally:
        for c, _, _ in agents:
            c.stop()
        await asyncio.wait_for(asyncio.gather(*tasks), GUARD_S)
        for _, group, streams in agents:
            for stream in streams:
                await stream_redis.xgroup_destroy(stream, group)
