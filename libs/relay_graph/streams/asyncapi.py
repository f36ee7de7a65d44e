"""An AsyncAPI 3.0 description of Relay's notifications, generated from the models, so the
gateway can serve it next to /openapi.json."""

from __future__ import annotations

from typing import Any

from .keys import DEAD_LETTER_STREAMS, STREAM_PREFIX
from .notifications import NOTIFICATION_TYPES

REF = "#/components/schemas/{model}"

TRACE_HEADERS = {
    "type": "object",
    "description": "W3C trace context, injected by the publisher's OpenTelemetry propagator; "
    "each is a field of the stream entry next to `kind` and `payload`.",
    "properties": {
        "traceparent": {"type": "string", "description": "W3C traceparent of the publish span"},
        "tracestate": {"type": "string"},
        "baggage": {"type": "string"},
    },
}

DEAD_LETTER = {
    "type": "object",
    "description": "The original entry's fields (kind, payload, trace headers; as they were, even if "
    "undecodable) plus these.",
    "properties": {
        "dlq.error": {"type": "string", "description": "why it was given up on"},
        "dlq.stream": {"type": "string"},
        "dlq.original_id": {"type": "string", "description": "the entry id on the original stream"},
        "dlq.group": {"type": "string", "description": "the consumer group that gave up"},
        "dlq.consumer": {"type": "string"},
        "dlq.deliveries": {"type": "string", "description": "delivery count (an integer as text)"},
        "dlq.at": {"type": "string", "format": "date-time"},
    },
    "required": ["dlq.error", "dlq.stream", "dlq.original_id", "dlq.group", "dlq.deliveries"],
}


def _short(stream: str) -> str:
    return stream.removeprefix(STREAM_PREFIX)


def asyncapi_document(
    *, title: str = "Relay notifications", version: str = "1.0.0", server: str = "127.0.0.1:6390"
) -> dict[str, Any]:
    schemas: dict[str, Any] = {"TraceHeaders": TRACE_HEADERS, "DeadLetter": DEAD_LETTER}
    messages: dict[str, Any] = {}
    channels: dict[str, Any] = {}
    operations: dict[str, Any] = {}

    for cls in NOTIFICATION_TYPES:
        name = cls.__name__
        schema = cls.model_json_schema(mode="serialization", ref_template=REF)
        schemas.update(schema.pop("$defs", {}))
        schemas[name] = schema
        kind = cls.model_fields["kind"].default
        messages[name] = {
            "name": kind,
            "title": name,
            "summary": (cls.__doc__ or name).strip().splitlines()[0],
            "contentType": "application/json",
            "headers": {"$ref": REF.format(model="TraceHeaders")},
            "payload": {"$ref": REF.format(model=name)},
        }
        channel = _short(cls.stream)
        channels[channel] = {
            "address": cls.stream,
            "title": f"{name} notifications",
            "description": f"Redis stream; each entry has fields `kind`={kind!r}, `payload` (the JSON below) "
            "and the trace headers. Trimmed by approximate MAXLEN. Consumed by consumer groups, "
            "one per service; acknowledged only after the handler's graph write committed.",
            "messages": {name: {"$ref": f"#/components/messages/{name}"}},
        }
        operations[f"publish{name}"] = {
            "action": "send",
            "channel": {"$ref": f"#/channels/{channel}"},
            "summary": f"A service announces that a {channel[:-1] if channel.endswith('s') else channel} changed.",
            "messages": [{"$ref": f"#/channels/{channel}/messages/{name}"}],
        }
        operations[f"consume{name}"] = {
            "action": "receive",
            "channel": {"$ref": f"#/channels/{channel}"},
            "summary": "Consumer groups re-read the graph for what changed; stale versions are ignored.",
            "messages": [{"$ref": f"#/channels/{channel}/messages/{name}"}],
        }

    messages["DeadLetter"] = {
        "name": "dead_letter",
        "title": "DeadLetter",
        "summary": "An entry that could not be decoded or kept failing, with the error.",
        "contentType": "application/json",
        "payload": {"$ref": REF.format(model="DeadLetter")},
    }
    for stream, dlq in DEAD_LETTER_STREAMS.items():
        channel = f"{_short(stream)}DeadLetters"
        channels[channel] = {
            "address": dlq,
            "title": f"dead letters of {stream}",
            "messages": {"DeadLetter": {"$ref": "#/components/messages/DeadLetter"}},
        }
        operations[f"deadLetter{_short(stream).capitalize()}"] = {
            "action": "send",
            "channel": {"$ref": f"#/channels/{channel}"},
            "messages": [{"$ref": f"#/channels/{channel}/messages/DeadLetter"}],
        }

    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": title,
            "version": version,
            "description": "Thin change notifications (ids and versions, never state) on Redis Streams. "
            "The tenant travels in the payload; stream keys are fixed.",
        },
        "defaultContentType": "application/json",
        "servers": {
            "falkordb": {"host": server, "protocol": "redis", "description": "the FalkorDB server carries the streams"}
        },
        "channels": channels,
        "operations": operations,
        "components": {"schemas": schemas, "messages": messages},
    }
