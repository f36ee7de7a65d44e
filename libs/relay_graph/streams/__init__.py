"""Relay's stream and delivery runtime: thin change notifications on Redis Streams.

Generic: nothing here knows about tickets' or facts' contents. Services publish notifications
with `Publisher`, and consume them with `Consumer` (one group per service, one consumer per
replica, ack after the handler returned, reclaim from dead replicas, dead letters, in-order
turns per session, trace context end to end). See `consumer.py` for the delivery design.
"""

from .asyncapi import asyncapi_document
from .consumer import Consumer, ConsumerStats, Delivery, Handler, consumer_name, stop_on_signals
from .dead_letters import DeadLetter, read_dead_letters
from .health import GroupInfo, missing_groups, stream_groups
from .keys import (
    DEAD_LETTER_STREAMS,
    STREAM_FACTS,
    STREAM_NETWORK,
    STREAM_OUTAGES,
    STREAM_REPLIES,
    STREAM_TICKETS,
    STREAM_TURNS,
    STREAMS,
    dead_letter_stream,
)
from .notifications import (
    KINDS,
    NOTIFICATION_TYPES,
    FactChanged,
    InvalidNotification,
    NetworkChanged,
    Notification,
    NotificationBase,
    OutageChanged,
    ReplyWritten,
    TicketChanged,
    TurnReceived,
    decode,
    encode,
    stream_for,
)
from .publisher import Publisher
from .settings import StreamSettings, connect

__all__ = [
    "Consumer", "ConsumerStats", "DEAD_LETTER_STREAMS", "DeadLetter", "Delivery", "FactChanged", "GroupInfo",
    "Handler", "InvalidNotification", "KINDS", "NOTIFICATION_TYPES", "NetworkChanged", "Notification",
    "NotificationBase", "OutageChanged", "Publisher", "ReplyWritten", "STREAMS", "STREAM_FACTS", "STREAM_NETWORK",
    "STREAM_OUTAGES", "STREAM_REPLIES", "STREAM_TICKETS", "STREAM_TURNS", "StreamSettings", "TicketChanged",
    "TurnReceived", "asyncapi_document", "connect", "consumer_name", "dead_letter_stream", "decode", "encode",
    "missing_groups", "read_dead_letters", "stop_on_signals", "stream_for", "stream_groups",
]
