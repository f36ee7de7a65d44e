"""The layout of one stream entry: `kind`, `payload` (the notification's JSON) and the trace
headers the OpenTelemetry propagator injects (`traceparent`, `tracestate`, `baggage`).

An entry comes in one of two shapes, read alike by `text_fields`: those fields side by side
(what `Publisher` XADDs, the agents' way), or FastStream's envelope, one `__data__` field holding
the body (the payload) and the headers (`kind` and the trace headers) in FastStream's binary
message format (what a FastStream broker's publish XADDs: the gateway's way, BrokerPublisher)."""

from __future__ import annotations

from typing import Any, Mapping
from uuid import uuid4

from faststream.redis.parser.binary import BinaryMessageFormatV1
from opentelemetry import propagate

from relay_graph.runtime.streams.notifications import (
    InvalidNotification,
    Notification,
    NotificationBase,
    decode,
    encode,
)

KIND = "kind"
PAYLOAD = "payload"
RESERVED = frozenset({KIND, PAYLOAD})
MAX_HEADER_CHARS = 1_024
DATA_KEY = "__data__"  # FastStream's one field per entry
# Headers FastStream's envelope adds of its own (not trace context).
ENVELOPE_HEADERS = frozenset({"content-type", "correlation_id", "reply_to", "message_id"})


def trace_headers() -> dict[str, str]:
    """The *current* trace context, as the entry fields that carry it."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return {k: v for k, v in carrier.items() if k not in RESERVED}


def to_fields(notification: NotificationBase) -> dict[str, str]:
    """Entry fields for a notification, with the *current* trace context injected."""
    return {KIND: notification.kind, PAYLOAD: encode(notification), **trace_headers()}  # type: ignore[attr-defined]


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, str):
        return value
    raise TypeError(f"unexpected field value type {type(value).__name__}")


def text_fields(raw: Mapping[Any, Any] | None) -> dict[str, str]:
    """Entry fields as text, in our layout whichever shape the entry has (a FastStream envelope
    is opened: its body is the payload, its headers the other fields); InvalidNotification if any
    of them is not UTF-8."""
    if not raw:
        raise InvalidNotification("empty stream entry")
    envelope = raw.get(DATA_KEY.encode(), raw.get(DATA_KEY))
    if envelope is not None:
        return _opened(envelope)
    try:
        return {_text(k): _text(v) for k, v in raw.items()}
    except (UnicodeDecodeError, TypeError) as exc:
        raise InvalidNotification(f"stream entry is not UTF-8 text: {exc}") from exc


def _opened(envelope: Any) -> dict[str, str]:
    data = envelope if isinstance(envelope, bytes) else str(envelope).encode()
    try:
        body, headers = BinaryMessageFormatV1.parse(data)
        fields = {str(k): _text(v) if isinstance(v, (bytes, str)) else str(v) for k, v in headers.items()
                  if str(k) not in ENVELOPE_HEADERS}
        fields[PAYLOAD] = _text(body)
    except (UnicodeDecodeError, TypeError, ValueError) as exc:
        raise InvalidNotification(f"stream entry's FastStream envelope is not readable: {exc}") from exc
    return fields


def envelope_headers(notification: NotificationBase, trace: Mapping[str, str] | None = None) -> dict[str, str]:
    """The headers of a notification published through a FastStream broker: its kind and the
    trace context (`trace`, or the *current* one; the body is the payload, `encode(notification)`)."""
    return {KIND: notification.kind, **(trace_headers() if trace is None else trace)}  # type: ignore[attr-defined]


async def envelope(notification: NotificationBase, trace: Mapping[str, str] | None = None) -> bytes:
    """The `__data__` value a FastStream broker's publish XADDs for a notification (body: the
    payload; headers: `envelope_headers`; a fresh correlation id, as the broker gives one)."""
    return await BinaryMessageFormatV1.encode(message=encode(notification).encode(), reply_to=None,
                                              headers=envelope_headers(notification, trace),
                                              correlation_id=str(uuid4()))


def from_fields(fields: Mapping[str, str]) -> Notification:
    payload = fields.get(PAYLOAD)
    if payload is None:
        raise InvalidNotification("stream entry has no payload field")
    notification = decode(payload)
    if fields.get(KIND) not in (None, notification.kind):
        raise InvalidNotification(f"entry kind {fields.get(KIND)!r} does not match payload kind {notification.kind!r}")
    return notification


def carrier(fields: Mapping[str, str]) -> dict[str, str]:
    """The trace headers of an entry, for `opentelemetry.propagate.extract`."""
    return {k: v[:MAX_HEADER_CHARS] for k, v in fields.items() if k not in RESERVED}
