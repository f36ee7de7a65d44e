"""The notification models, their wire format and the fixed keys (pure logic, no broker)."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone

import pytest
from opentelemetry import trace
from pydantic import ValidationError

from relay_graph.runtime.errors import InvalidInput, InvalidTenant
from relay_graph.runtime.streams import (
    DEAD_LETTER_STREAMS,
    KINDS,
    NOTIFICATION_TYPES,
    STREAMS,
    StreamApp,
    FactChanged,
    InvalidNotification,
    NetworkChanged,
    OutageChanged,
    ReplyWritten,
    StreamSettings,
    TicketChanged,
    TurnReceived,
    connect,
    consumer_name,
    dead_letter_stream,
    decode,
    encode,
    stream_for,
)
from relay_graph.runtime.streams.keys import error_key, seen_key
from relay_graph.runtime.streams.service import _wants_delivery
from relay_graph.runtime.streams.wire import PAYLOAD, carrier, from_fields, text_fields, to_fields

AT = datetime(2026, 9, 5, 10, 0, tzinfo=timezone.utc)


def samples():
    return [
        TurnReceived(tenant="acme", episode_id="ep-1", seq=3, session="s-1", customer="c-1", at=AT),
        TicketChanged(tenant="acme", ticket_id="T-1", version=2, change="handed_off", actor="intake", at=AT),
        NetworkChanged(tenant="acme", node_id="olt-3", version=7, change="down", actor="netops", at=AT),
        ReplyWritten(tenant="acme", episode_id="ep-2", session="s-1", reply_to="ep-1", actor="intake", ticket_id="T-1"),
        FactChanged(tenant="acme", fact_id="f-1", version=1, change="superseded", actor="resolver"),
        OutageChanged(tenant="acme", outage_id="o-1", version=1, change="declared", actor="netops", node_id="olt-3"),
    ]


@pytest.mark.parametrize("notification", samples(), ids=lambda n: n.kind)
def test_round_trip_through_json(notification):
    again = decode(encode(notification))
    assert again == notification
    assert type(again) is type(notification)
    assert isinstance(again.notification_id, uuid.UUID)


def test_kind_specific_names_are_aliases_of_the_common_fields():
    turn = samples()[0]
    assert (turn.id, turn.episode_id, turn.version, turn.seq) == ("ep-1", "ep-1", 3, 3)
    assert samples()[1].ticket_id == "T-1"
    assert samples()[2].node_id == "olt-3"
    payload = json.loads(encode(turn))
    assert payload["id"] == "ep-1" and payload["version"] == 3 and payload["kind"] == "turn_received"


def test_bad_tenant_is_a_typed_error():
    with pytest.raises(InvalidTenant):
        TicketChanged(tenant="Acme Corp", ticket_id="T-1", version=1, change="opened", actor="intake")
    payload = json.loads(encode(samples()[1]))
    payload["tenant"] = "../other"
    with pytest.raises(InvalidNotification):
        decode(json.dumps(payload))


def test_naive_time_and_unknown_change_are_rejected():
    with pytest.raises(ValidationError):
        TicketChanged(tenant="acme", ticket_id="T-1", version=1, change="opened", actor="x", at=datetime(2026, 1, 1))
    with pytest.raises(ValidationError):
        TicketChanged(tenant="acme", ticket_id="T-1", version=1, change="deleted", actor="x")


@pytest.mark.parametrize(
    "data",
    [
        "not json",
        "{}",
        '{"kind": "ticket_exploded", "tenant": "acme"}',
        '{"kind": "ticket_changed", "tenant": "acme", "id": "T-1"}',
        '{"kind": "ticket_changed", "tenant": "acme", "id": "", "version": 1, "change": "opened", "actor": "x", "at": "2026-01-01T00:00:00Z"}',
        '{"kind": "ticket_changed", "tenant": "acme", "id": "T-1", "version": -1, "change": "opened", "actor": "x", "at": "2026-01-01T00:00:00Z"}',
        '{"kind": "ticket_changed", "tenant": "acme", "id": "T-1", "version": 1, "change": "opened", "actor": "x", "at": "2026-01-01T00:00:00"}',
        b"\xff\xfe",
    ],
)
def test_decode_rejects_anything_but_a_notification(data):
    with pytest.raises(InvalidNotification) as info:
        decode(data)
    assert info.value.code == "invalid_notification" and info.value.status == 422


def test_state_never_travels():
    """Fields a notification does not define (text, names, values) are dropped, not carried on."""
    payload = json.loads(encode(samples()[0]))
    payload["text"] = "my password is hunter2"
    again = decode(json.dumps(payload))
    assert "hunter2" not in encode(again)
    for cls in NOTIFICATION_TYPES:
        assert not {"text", "body", "message", "object", "subject"} & set(cls.model_fields)


def test_turns_of_a_session_share_an_opaque_order_key():
    a = TurnReceived(tenant="acme", episode_id="e1", seq=1, session="alice's chat", customer="c")
    b = TurnReceived(tenant="acme", episode_id="e2", seq=2, session="alice's chat", customer="c")
    other_tenant = TurnReceived(tenant="bcme", episode_id="e3", seq=1, session="alice's chat", customer="c")
    other_session = TurnReceived(tenant="acme", episode_id="e4", seq=1, session="bob", customer="c")
    assert a.order_key() == b.order_key()
    assert a.order_key() not in (other_tenant.order_key(), other_session.order_key())
    assert "alice" not in a.order_key() and len(a.order_key()) == 32
    assert all(n.order_key() is None for n in samples()[1:])


def test_each_kind_has_one_fixed_stream_and_dead_letter_stream():
    assert len(KINDS) == len(NOTIFICATION_TYPES) == len(STREAMS) == len(set(STREAMS))
    assert {stream_for(k) for k in KINDS} == set(STREAMS)
    assert stream_for(TurnReceived) == stream_for("turn_received") == stream_for(samples()[0]) == "relay:stream:turns"
    assert dead_letter_stream("relay:stream:turns") == "relay:dlq:{relay:stream:turns}"
    assert set(DEAD_LETTER_STREAMS.values()) == {"relay:dlq:{" + s + "}" for s in STREAMS}
    with pytest.raises(InvalidInput):
        dead_letter_stream("relay:stream:acme")
    with pytest.raises(InvalidInput):
        stream_for("nope")


def test_keys_with_parts_take_only_validated_values():
    nid = uuid.uuid4()
    # each in its stream's hash slot (the stream's name is the hash tag): one MULTI with the XACK
    assert seen_key("intake", nid, "relay:stream:turns") == f"relay:seen:{{relay:stream:turns}}:intake:{nid}"
    assert error_key("intake", "relay:stream:turns", "1-0") == "relay:lasterr:{relay:stream:turns}:intake:1-0"
    for bad in ("Intake", "in take", "a:b", "", "x" * 70):
        with pytest.raises(InvalidInput):
            seen_key(bad, nid, "relay:stream:turns")
    with pytest.raises(InvalidInput):
        error_key("intake", "relay:stream:turns", "1-0; DEL x")
    with pytest.raises(ValueError):
        seen_key("intake", "not-a-uuid", "relay:stream:turns")


def test_wire_fields_carry_payload_kind_and_trace_context():
    from opentelemetry.sdk.trace import TracerProvider

    tracer = TracerProvider().get_tracer("test")  # a real span without touching the global provider
    ticket = samples()[1]
    with trace.use_span(tracer.start_span("request"), end_on_exit=True) as span:
        fields = to_fields(ticket)
    trace_id = format(span.get_span_context().trace_id, "032x")
    assert fields["kind"] == "ticket_changed" and trace_id in fields["traceparent"]
    assert from_fields(text_fields({k.encode(): v.encode() for k, v in fields.items()})) == ticket
    assert set(carrier(fields)) == {"traceparent"}


def test_wire_rejects_entries_that_are_not_notifications():
    with pytest.raises(InvalidNotification):
        text_fields({b"payload": b"\xff\xfe"})
    with pytest.raises(InvalidNotification):
        text_fields({})
    with pytest.raises(InvalidNotification):
        from_fields({"kind": "ticket_changed"})
    fields = to_fields(samples()[1])
    with pytest.raises(InvalidNotification):
        from_fields({**fields, "kind": "turn_received"})
    with pytest.raises(InvalidNotification):
        from_fields({PAYLOAD: "[]"})


def test_consumer_names_are_unique_per_replica_and_groups_are_validated():
    names = {consumer_name("intake") for _ in range(50)}
    assert len(names) == 50 and all(n.startswith("intake-") for n in names)
    client = connect(host="127.0.0.1", port=1)  # never connected: construction is offline

    async def one(n):  # noqa: ARG001
        pass

    async def two(n, delivery):  # noqa: ARG001
        pass

    consumer = StreamApp(client, group="intake", handlers={TurnReceived: one, "ticket_changed": two})
    assert consumer.streams == ("relay:stream:tickets", "relay:stream:turns")
    # per kind, one FastStream subscriber for fresh entries and one (XAUTOCLAIM) for idle ones
    subs = sorted((s.stream_sub.name, s.stream_sub.min_idle_time is not None) for s in consumer.broker.subscribers)
    assert subs == [("relay:stream:tickets", False), ("relay:stream:tickets", True),
                    ("relay:stream:turns", False), ("relay:stream:turns", True)]
    assert _wants_delivery(one) is False and _wants_delivery(two) is True
    with pytest.raises(InvalidInput):
        StreamApp(client, group="Intake Team", handlers={TurnReceived: one})
    with pytest.raises(InvalidInput):
        StreamApp(client, group="intake", handlers={"nope": one})
    with pytest.raises(InvalidInput):
        StreamApp(client, group="intake", handlers={})
    assert StreamSettings(min_idle_ms=900).heartbeat_every_ms == 300
