"""Relay's stream and delivery runtime: thin change notifications on Redis Streams.

Generic: nothing here knows about tickets' or facts' contents. Services publish notifications
with `Publisher`, and consume them with `StreamApp`, a FastStream app per service (one group per
service, one consumer per replica, ack after the handler returned, reclaim from dead replicas,
dead letters, in-order turns per session, trace context end to end). See `service.py` and
`delivery.py` for the delivery design.
"""

from relay_graph.runtime.streams.asyncapi import asyncapi_document
from relay_graph.runtime.streams.dead_letters import DeadLetter, read_dead_letters
from relay_graph.runtime.streams.delivery import Delivery
from relay_graph.runtime.streams.health import GroupInfo, missing_groups, stream_groups
from relay_graph.runtime.streams.keys import (
    DEAD_LETTER_STREAMS,
    STREAM_FACTS,
    STREAM_NETWORK,
    STREAM_OUTAGES,
    STREAM_REPLIES,
    STREAM_TASKS,
    STREAM_TICKETS,
    STREAM_TURNS,
    STREAMS,
    dead_letter_stream,
)
from relay_graph.runtime.streams.notifications import (
    KINDS,
    NOTIFICATION_TYPES,
    FactChanged,
    InvalidNotification,
    NetworkChanged,
    Notification,
    NotificationBase,
    OutageChanged,
    ReplyWritten,
    TaskChanged,
    TicketChanged,
    TurnReceived,
    decode,
    encode,
    stream_for,
)
from relay_graph.runtime.streams.publisher import BrokerPublisher, Publisher
from relay_graph.runtime.streams.service import Handler, StreamApp, StreamStats, consumer_name
from relay_graph.runtime.streams.settings import StreamSettings, connect

__all__ = [
    "BrokerPublisher",
    "DEAD_LETTER_STREAMS", "DeadLetter", "Delivery", "FactChanged", "GroupInfo",
    "Handler", "InvalidNotification", "KINDS", "NOTIFICATION_TYPES", "NetworkChanged", "Notification",
    "NotificationBase", "OutageChanged", "Publisher", "ReplyWritten", "STREAMS", "STREAM_FACTS", "STREAM_NETWORK",
    "STREAM_OUTAGES", "STREAM_REPLIES", "STREAM_TASKS", "STREAM_TICKETS", "STREAM_TURNS", "StreamApp", "StreamSettings", "StreamStats", "TaskChanged", "TicketChanged",
    "TurnReceived", "asyncapi_document", "connect", "consumer_name", "dead_letter_stream", "decode", "encode",
    "missing_groups", "read_dead_letters", "stream_for", "stream_groups",
]
