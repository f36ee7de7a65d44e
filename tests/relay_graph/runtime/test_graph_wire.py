"""The read path on the wire (graph_wire): the text it sends is the falkordb client's, the rows it
reads are the ones falkordb's parser gives, errors keep their redis-py classes, and a connection
is only reused after a whole reply."""

import asyncio
import enum
from collections import OrderedDict

import numpy as np
import pytest
import redis
from falkordb.asyncio.query_result import parse_scalar
from falkordb.graph import Graph
from falkordb.helpers import stringify_param_value

from relay_graph.runtime import graph_wire
from relay_graph.runtime.db import GraphClient, _plain
from relay_graph.memory.episodes import wire_vector
from relay_graph.runtime.queries import Query
from tests.support import eventually

class Colour(str, enum.Enum):
    RED = 're"d'


VALUES = [
    "plain", "", 'say "hi"', "back\\slash", "line\nbreak", "ünïcødé ✓", "' OR 1=1 //", "}) MATCH (n) DETACH DELETE n //",
    None, True, False, 0, -7, 2**40, 1.5, -0.000123, 1e-9,
    ["a", 1, None, [2.5, "b"]], ("t", 2), {"k": "v", "n": [1, {"deep": None}]}, [],
    Colour.RED, OrderedDict(a=1), np.float64(0.25), np.int64(3),
]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_a_parameter_is_written_as_the_falkordb_client_writes_it(value):
    assert graph_wire.literal(value) == stringify_param_value(value)


def test_bytes_are_sent_as_the_text_they_hold():  # falkordb would send Python's b'...' unquoted
    assert graph_wire.literal(b'by"tes') == graph_wire.literal('by"tes') == '"by\\"tes"'


def test_the_header_is_the_falkordb_clients():
    params = {"s": 'a "b"', "l": [1, "x"], "m": {"a": 1}, "v": wire_vector([0.5, -0.25, 1.0])}
    assert graph_wire.params_header(params) == Graph._build_params_header(None, params)
    assert graph_wire.params_header({}) == "" and graph_wire.params_header(None) == ""


@pytest.mark.parametrize("bad", [{"a`b": 1}, {"": 1}])
def test_a_name_with_a_backtick_or_empty_is_refused(bad):
    with pytest.raises(ValueError):
        graph_wire.params_header(bad)
    with pytest.raises(ValueError):
        graph_wire.literal({"m": bad})


COMPACT = [
    [1, None], [2, "text"], [3, 42], [4, "true"], [4, "false"], [5, "2.5"],
    [6, [[3, 1], [2, "a"], [6, [[1, None]]]]],
    [10, ["a", [3, 1], "b", [10, ["c", [6, [[5, "0.25"]]]]]]],
    [11, ["12.5", "-3.25"]], [12, ["0.5", "1.5"]],
]


@pytest.mark.parametrize("cell", COMPACT, ids=repr)
async def test_a_value_reads_as_falkordbs_parser_reads_it(cell):
    assert graph_wire.value(cell) == _plain(await parse_scalar(cell, None))


def test_a_value_the_lean_reader_does_not_know_goes_to_falkordb():
    with pytest.raises(graph_wire._NotScalar):
        graph_wire.value([8, [1, [0], [[0, 2, "x"]]]])


# ------------------------------------------------------------------ against the server

SCALARS = Query(
    "wire_scalars",
    "RETURN $s AS s, $i AS i, $f AS f, $b AS b, $n AS n, $l AS l, $m AS m, point({latitude: 1.5, longitude: 2.5}) AS p, "
    "vecf32([0.5, 0.25]) AS v, 1.0 / 4 AS q",
    read_only=True,
)


async def test_rows_are_the_ones_the_falkordb_client_gives(graph_client, tenant):
    params = {"s": 'quo"te \\ ünï', "i": 7, "f": 0.125, "b": True, "n": None, "l": ["x", [1, 2.5]],
              "m": {"k": "v", "z": [None]}}
    lean = await graph_client.run(tenant, SCALARS, params)
    res = await graph_client._graph(tenant).ro_query(SCALARS.cypher, params)
    via_falkordb = [{h[1]: _plain(v) for h, v in zip(res.header, row)} for row in res.result_set]
    assert lean == via_falkordb
    assert lean[0]["s"] == 'quo"te \\ ünï' and lean[0]["m"] == {"k": "v", "z": [None]}


async def test_nodes_come_back_as_their_properties(graph_client, tenant):
    await graph_client.run(tenant, Query("w", "CREATE (:Probe {name: 'n1', n: 3})"))
    rows = await graph_client.run(tenant, Query("r", "MATCH (p:Probe) RETURN p, p.name AS name", read_only=True))
    assert rows == [{"p": {"name": "n1", "n": 3}, "name": "n1"}]


async def test_a_server_error_is_a_response_error_and_the_connection_goes_on(graph_client, tenant):
    with pytest.raises(redis.exceptions.ResponseError):
        await graph_client.run(tenant, Query("bad", "RETURN nosuchfunction(1) AS x", read_only=True))
    with pytest.raises(redis.exceptions.ResponseError, match="zero"):  # a run-time error
        await graph_client.run(tenant, Query("bad", "UNWIND [1, 0] AS d RETURN 1 / d AS x", read_only=True))
    assert await graph_client.run(tenant, Query("ok", "RETURN 1 AS x", read_only=True)) == [{"x": 1}]


async def test_a_cancelled_read_does_not_leave_its_reply_for_the_next(graph_settings, graph_client, tenant):
    client = GraphClient(graph_settings.model_copy(update={"max_connections": 1}))
    slow = Query("slow", "UNWIND range(1, 3000000) AS i WITH i WHERE i % 1000003 = 0 RETURN 'slow' AS x",
                 read_only=True)

    async def on_the_server() -> bool:
        """The slow read is running: a client of the server is blocked in GRAPH.RO_QUERY."""
        return any(str(c.get("cmd")).lower() == "graph.ro_query" and "b" in c.get("flags", "")
                   for c in await graph_client.redis.client_list())

    try:
        await client.ensure_schema(tenant)  # so that only the read is left to run (about 0.7 s)
        task = asyncio.ensure_future(client.run(tenant, slow))
        await eventually(on_the_server, interval=0.005, what="the slow read running on the server")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        for i in range(3):  # one connection allowed: each answer must be its own
            assert await client.run(tenant, Query("q", "RETURN $i AS x", read_only=True), {"i": i}) == [{"x": i}]
    finally:
        await client.close()


async def test_a_connection_the_server_closed_is_replaced(graph_client, tenant):
    ask = Query("q", "RETURN $i AS x", read_only=True)
    assert await graph_client.run(tenant, ask, {"i": 1}) == [{"x": 1}]
    own = await graph_client.reads.call("CLIENT", "ID")  # the connection the next read reuses
    assert await graph_client.redis.execute_command("CLIENT", "KILL", "ID", own) == 1
    assert await graph_client.run(tenant, ask, {"i": 2}) == [{"x": 2}]


async def test_an_unreachable_server_is_a_connection_error():
    from relay_graph.runtime.embedded import free_port

    reads = graph_wire.Connections("127.0.0.1", free_port(), None, 2)
    with pytest.raises(redis.exceptions.ConnectionError):  # the gateway answers 503 for it
        await reads.call("PING")


async def test_a_server_that_dies_while_a_read_signs_in_is_a_connection_error():
    """A peer that resets the connection on the sign-in (FalkorDB killed at that moment): the
    gateway answers 503 for a connection error, and 500 for anything it does not know."""
    import socket
    import struct

    async def reset(reader, writer):
        await reader.read(100)  # the AUTH
        writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.close()

    server = await asyncio.start_server(reset, "127.0.0.1", 0)
    try:
        reads = graph_wire.Connections("127.0.0.1", server.sockets[0].getsockname()[1], "s3cret", 2)
        with pytest.raises(redis.exceptions.ConnectionError, match="while signing in"):
            await reads.call("PING")
    finally:
        server.close()
        await server.wait_closed()


@pytest.mark.falkordb
async def test_reads_sign_in_where_the_server_wants_a_password(tmp_path):
    from relay_graph.runtime.embedded import EmbeddedFalkorDB, free_port

    server = EmbeddedFalkorDB(tmp_path, free_port(), password="s3cret").start()
    try:
        for password in ("wrong", None):
            refused = graph_wire.Connections(server.host, server.port, password, 2)
            with pytest.raises(redis.exceptions.AuthenticationError):
                graph_wire.raise_for_errors(await refused.call("PING"))
        reads = graph_wire.Connections(server.host, server.port, "s3cret", 2)
        assert await reads.call("GRAPH.RO_QUERY", "relay:pw", "RETURN 1", "--compact") is not None
        reads.close()
    finally:
        server.stop()


async def test_the_client_keeps_a_bounded_log_of_its_last_queries(graph_settings, tenant):
    client = GraphClient(graph_settings.model_copy(update={"query_log_size": 3}))
    try:
        q = Query("t_log", "RETURN 1 AS one", read_only=True)
        for _ in range(5):
            await client.run(tenant, q)
        bad = Query("t_log_bad", "RETURN nope", read_only=True)
        with pytest.raises(Exception):
            await client.run(tenant, bad)
        log = list(client.recent)
        assert [e["query"] for e in log] == ["t_log", "t_log", "t_log_bad"]
        assert [e["ok"] for e in log] == [True, True, False] and all(e["ms"] >= 0 for e in log)
        assert log[0]["rows"] == 1 and log[-1]["tenant"] == tenant
    finally:
        await client.close()
