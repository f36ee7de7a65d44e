"""The shared query log (runtime/query_log.py): entries reach the tenant's capped stream in the
background, newest first when read, parameters kept only when small, and a server that does not
answer costs log entries, never the query or an exception."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis

from relay_graph.runtime import query_log, tenancy
from relay_graph.runtime.embedded import free_port
from relay_graph.runtime.errors import InvalidValue


def entry(name: str, rows: int = 1) -> dict:
    return {"query": name, "ok": True, "rows": rows, "ms": 0.5, "at_ms": 1}


def test_what_a_process_is_called_and_which_parameters_are_kept():
    assert query_log.process_name()  # pytest's own name here; services.resolver -> resolver
    assert query_log.kept_params({"uid": "customer:asha"}) == '{"uid":"customer:asha"}'
    assert query_log.kept_params({"vector": [0.1] * 384}) is None  # an embedding is never kept
    assert query_log.kept_params(None) == "{}"


def test_a_run_id_is_two_numbers_below_2_to_the_64():
    top = str(2**64 - 1)
    for good in ("0-0", "1764637200000-0", f"{top}-{top}", f"{2**64 - 10}-3", "9999999999999999999-1"):
        assert query_log.check_run_id(good) == good
    for bad in (f"{2**64}-0", f"0-{2**64}", "99999999999999999999-0", "01-0", "1-", "-1", "1", "1-0 ", "latest"):
        with pytest.raises(InvalidValue):
            query_log.check_run_id(bad)


async def test_entries_reach_the_tenants_capped_stream_in_the_background(graph_client, tenant):
    log = query_log.SharedQueryLog(graph_client.redis, size=5, flush_s=0.01, process="netops")
    for i in range(12):
        log.record(tenant, entry(f"q{i}"), read_only=i % 2 == 0, params={"i": i})
    await asyncio.sleep(0.2)  # written by the background flush, not by record()
    runs = await query_log.read(graph_client.redis, tenant, 100)
    assert runs[0].query == "q11" and runs[0].process == "netops" and not runs[0].read_only
    assert runs[1].params == {"i": 10} and runs[1].read_only
    assert [r.query for r in runs] == [f"q{i}" for i in range(11, 6, -1)]  # capped: the last 5
    assert await query_log.one(graph_client.redis, tenant, runs[1].id) == runs[1]
    assert 0 < await graph_client.redis.ttl(query_log.key(tenant)) <= query_log.TTL_S
    log.record(tenant, entry("last"), read_only=True, params={})
    assert await log.forget(tenant) and await query_log.read(graph_client.redis, tenant, 10) == []
    await log.close()
    assert await query_log.read(graph_client.redis, tenant, 10) == []  # the unwritten one went too


async def test_entries_of_a_tenant_deleted_before_the_flush_start_no_log(graph_client, tenant):
    """Another process's entries, buffered when the tenant was deleted: the flush drops them, so no
    log of the deleted tenant comes back."""
    other = query_log.SharedQueryLog(graph_client.redis, size=5, flush_s=60, process="resolver")
    other.record(tenant, entry("outbox_done"), read_only=False, params={})
    other.record("someone-else", entry("q"), read_only=True, params={})  # never registered either
    assert await tenancy.unregister(graph_client.redis, tenant)  # the delete
    await other.close()  # flushes
    assert not await graph_client.redis.exists(query_log.key(tenant))
    assert not await graph_client.redis.exists(query_log.key("someone-else"))


async def test_a_server_that_does_not_answer_loses_entries_not_queries(tenant):
    dead = aioredis.Redis(port=free_port(), socket_connect_timeout=0.5)
    log = query_log.SharedQueryLog(dead, size=10, flush_s=0.01)
    log.record(tenant, entry("q"), read_only=True, params={})
    await log.close()
    assert log.dropped == 1
    await dead.aclose()
    off = query_log.SharedQueryLog(dead, size=10, flush_s=0)  # RELAY_QUERY_LOG_FLUSH_S=0: off
    off.record(tenant, entry("q"), read_only=True, params={})
    await off.close()
    assert off.dropped == 0
