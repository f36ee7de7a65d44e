"""The layout of one stream entry: `kind`, `payload` (the notification's JSON) and the trace
headers the OpenTelemetry propagator injects (`traceparent`, `tracestate`, `baggage`)."""

from __future__ import annotations

from typing import Any, Mapping

from opentelemetry import propagate

from .notifications import InvalidNotification, Notification, NotificationBase, decode, encode

KIND = "kind"
PAYLOAD = "payload"
RESERVED = frozenset({KIND, PAYLOAD})
MAX_HEADER_CHARS = 1_024


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
    """Entry fields as text; InvalidNotification if any of them is not UTF-8."""
    if not raw:
        raise InvalidNotification("empty stream entry")
    try:
        return {_text(k): _text(v) for k, v in raw.items()}
    except (UnicodeDecodeError, TypeError) as exc:
        raise InvalidNotification(f"stream entry is not UTF-8 text: {exc}") from exc


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
