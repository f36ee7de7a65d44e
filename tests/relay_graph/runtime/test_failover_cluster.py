"""The cluster client's one failover race (redis-py raising AttributeError on a connection torn down
while a command is sent): sent once more, then a ConnectionError; any other AttributeError is not
ours to hide. redis-py's own `execute_command` is replaced by a scripted one: what is under test is
the wrapper's logic, not the network."""

from __future__ import annotations

import pytest
import redis
from redis.asyncio.cluster import RedisCluster

from relay_graph.runtime.cluster import FailoverCluster

TORN = AttributeError("'NoneType' object has no attribute 'writelines'")


def scripted(monkeypatch, *outcomes):
    calls = []

    async def execute_command(self, *args, **kwargs):
        calls.append(args)
        out = outcomes[len(calls) - 1]
        if isinstance(out, BaseException):
            raise out
        return out

    monkeypatch.setattr(RedisCluster, "execute_command", execute_command)
    return calls


def client() -> FailoverCluster:
    return FailoverCluster.__new__(FailoverCluster)  # no nodes: execute_command is scripted


async def test_a_command_on_a_torn_down_connection_is_sent_once_more(monkeypatch):
    calls = scripted(monkeypatch, TORN, "PONG")
    assert await client().execute_command("PING") == "PONG" and calls == [("PING",), ("PING",)]


async def test_torn_down_twice_is_a_lost_connection(monkeypatch):
    scripted(monkeypatch, TORN, TORN)
    with pytest.raises(redis.exceptions.ConnectionError):
        await client().execute_command("GET", "k")


async def test_another_attribute_error_is_raised_as_it_is(monkeypatch):
    calls = scripted(monkeypatch, AttributeError("no attribute 'slots'"))
    with pytest.raises(AttributeError, match="slots"):
        await client().execute_command("GET", "k")
    assert len(calls) == 1
