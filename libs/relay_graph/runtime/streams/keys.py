"""Every Redis key the streams runtime touches, from code constants only.

Stream keys are fixed per notification kind; the tenant travels inside the payload, never in a
key. Keys that need a per-item part (the dedupe marks, the remembered errors) take it from values
the runtime produced itself (a UUID, a Redis entry id, a validated group name), never from user
text. Order keys are hashes, so a session id never appears in Redis as a key.

On a cluster (cluster.py) every key that changes together with a stream shares the stream's hash
slot: the dead letters (XADD there, XACK here and DEL of the error, one MULTI), the dedupe marks
(SET in the MULTI of the XACK) and the remembered errors carry the stream's name as their hash tag
(`{relay:stream:turns}`), so the streams themselves keep their names and spread over the shards.
"""

from __future__ import annotations

import hashlib
import re
import uuid

from relay_graph.runtime.errors import InvalidInput

STREAM_TURNS = "relay:stream:turns"
STREAM_TICKETS = "relay:stream:tickets"
STREAM_NETWORK = "relay:stream:network"
STREAM_REPLIES = "relay:stream:replies"
STREAM_FACTS = "relay:stream:facts"
STREAM_OUTAGES = "relay:stream:outages"
STREAM_TASKS = "relay:stream:tasks"

STREAMS: tuple[str, ...] = (
    STREAM_TURNS,
    STREAM_TICKETS,
    STREAM_NETWORK,
    STREAM_REPLIES,
    STREAM_FACTS,
    STREAM_OUTAGES,
    STREAM_TASKS,
)

STREAM_PREFIX = "relay:stream:"
DEAD_LETTER_PREFIX = "relay:dlq:"
# Tenant ids cannot contain ":", so none of these can collide with a graph name `relay:<tenant>`.


def slot_tag(stream: str) -> str:
    """The hash tag that puts a key in `stream`'s slot (a key without braces hashes whole)."""
    return "{" + stream + "}"


DEAD_LETTER_STREAMS: dict[str, str] = {s: DEAD_LETTER_PREFIX + slot_tag(s) for s in STREAMS}

SEEN_PREFIX = "relay:seen:"
ERROR_PREFIX = "relay:lasterr:"

GROUP_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
ENTRY_ID_RE = re.compile(r"^\d{1,20}-\d{1,20}$")


def validate_group(group: object) -> str:
    """Consumer group names are service names from code (`intake`, `resolver`, ...)."""
    if not isinstance(group, str) or not GROUP_RE.fullmatch(group):
        raise InvalidInput("consumer group must match ^[a-z0-9][a-z0-9_-]{0,62}$ (a service name)")
    return group


def validate_stream(stream: object) -> str:
    if stream not in DEAD_LETTER_STREAMS:
        raise InvalidInput(f"unknown stream {stream!r}; streams are fixed: {', '.join(STREAMS)}")
    return stream  # type: ignore[return-value]


def dead_letter_stream(stream: str) -> str:
    return DEAD_LETTER_STREAMS[validate_stream(stream)]


def order_key(*parts: str) -> str:
    """A stable, opaque key for 'these notifications must be handled one after another'."""
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        h.update(part.encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()


def seen_key(group: str, notification_id: uuid.UUID, stream: str) -> str:
    return f"{SEEN_PREFIX}{slot_tag(validate_stream(stream))}:{validate_group(group)}:{uuid.UUID(str(notification_id))}"


def error_key(group: str, stream: str, entry_id: str) -> str:
    if not ENTRY_ID_RE.fullmatch(entry_id):
        raise InvalidInput("not a stream entry id")
    return f"{ERROR_PREFIX}{slot_tag(validate_stream(stream))}:{validate_group(group)}:{entry_id}"
