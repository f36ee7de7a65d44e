"""The AsyncAPI document is generated from the models and the stream constants."""

from __future__ import annotations

import json

from relay_graph.streams import DEAD_LETTER_STREAMS, KINDS, STREAMS, asyncapi_document


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


def test_document_describes_every_stream_and_message():
    doc = asyncapi_document()
    json.dumps(doc)  # serialisable as the gateway will serve it
    assert doc["asyncapi"] == "3.0.0"
    addresses = {c["address"] for c in doc["channels"].values()}
    assert addresses == set(STREAMS) | set(DEAD_LETTER_STREAMS.values())
    kinds = set()
    for message in doc["components"]["messages"].values():
        payload = _resolve(doc, message["payload"]["$ref"])
        if "kind" in payload.get("properties", {}):
            kinds.add(payload["properties"]["kind"]["const"])
            assert payload["properties"]["tenant"]["pattern"].startswith("^[a-z0-9]")
            assert "traceparent" in _resolve(doc, message["headers"]["$ref"])["properties"]
    assert kinds == set(KINDS)


def test_every_reference_resolves():
    doc = asyncapi_document()
    refs = list(_refs(doc))
    assert len(refs) > 20
    for ref in refs:
        assert _resolve(doc, ref) is not None, ref
    for op in doc["operations"].values():
        assert op["action"] in ("send", "receive")
