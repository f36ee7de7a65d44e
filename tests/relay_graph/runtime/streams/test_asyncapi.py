"""/asyncapi.json is FastStream's document of the agents' apps, with our entry headers added."""

from __future__ import annotations

import json

from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.streams import DEAD_LETTER_STREAMS, KINDS, STREAMS
from services.asyncapi import document


def _resolve(doc: dict, ref: str):
    node = doc
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return node


def _refs(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def test_document_describes_every_stream_message_and_header():
    doc = document(GraphSettings())
    json.dumps(doc)  # serialisable as the gateway will serve it
    assert doc["asyncapi"] == "3.0.0"
    addresses = {c["address"] for c in doc["channels"].values()}
    assert addresses == set(STREAMS) | set(DEAD_LETTER_STREAMS.values())
    kinds = set()
    for message in doc["components"]["messages"].values():
        payload = _resolve(doc, message["payload"]["$ref"])
        headers = _resolve(doc, message["headers"]["$ref"])["properties"]
        assert {"kind", "traceparent", "tracestate", "baggage"} <= set(headers)
        if "kind" in payload.get("properties", {}):
            kinds.add(payload["properties"]["kind"]["const"])
            assert payload["properties"]["tenant"]["pattern"].startswith("^[a-z0-9]")
        else:
            assert "dlq.error" in payload["properties"] and "dlq.deliveries" in payload["properties"]
    assert kinds == set(KINDS)


def test_the_agents_groups_are_the_receivers():
    doc = document(GraphSettings())
    receivers = {}
    for name, op in doc["operations"].items():
        assert op["action"] in ("send", "receive")
        if op["action"] == "receive":
            channel = _resolve(doc, op["channel"]["$ref"])
            receivers[channel["address"]] = channel["bindings"]["redis"]["groupName"]
    assert receivers == {"relay:stream:turns": "intake", "relay:stream:tickets": "resolver",
                         "relay:stream:network": "netops"}
    # the reclaim subscribers are the same group again, not another channel
    assert len([op for op in doc["operations"].values() if op["action"] == "receive"]) == 3


def test_every_reference_resolves():
    doc = document(GraphSettings())
    refs = list(_refs(doc))
    assert len(refs) > 20
    for ref in refs:
        assert _resolve(doc, ref) is not None, ref
