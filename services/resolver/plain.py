"""What the resolver's measurements mean, in the customer's words: no reading ids, no field names,
no lab clock ("your line tests healthy: 973 Mbps to the box"). Pure; the staff keep the full
readings on the timeline (diagnosing.describe)."""

from __future__ import annotations

from typing import Any, Iterable

from relay_graph.lab import Reading, Test

_LEVEL = {"home": "your home box", "street": "the street cabinet or cable", "exchange": "your exchange",
          "hub": "a link above your exchange", "core": "our core network"}


def _mbps(v: Any) -> str:
    return f"{float(v):.0f} Mbps"


def _line(v: dict[str, Any]) -> str:
    if not v.get("connected", True):
        return "no line on file"
    downs = sorted({_LEVEL.get(d.get("level"), "part of the network") for d in v.get("down") or []})
    if not v.get("reaches_core"):
        return "your line does not reach our network" + (f" ({', '.join(downs)} down)" if downs else "")
    if v.get("via_backup"):
        return "your line reaches our network over a standby link"
    return "your line reaches our network"


def reading_words(r: Reading) -> str:
    """One reading in plain words."""
    v = r.values
    if r.test is Test.SPEED_TEST:
        if not v.get("reachable"):
            return "your home box did not answer a speed test"
        if v.get("captive_portal"):
            return "your line is held at the payment page"
        return f"{_mbps(v.get('wired_mbps') or 0)} to the box, {_mbps(v.get('wifi_mbps') or 0)} over Wi-Fi"
    if r.test is Test.LIGHT_LEVEL:
        return "no light reading" if v.get("rx_dbm") is None else f"light at the box {v['rx_dbm']} dBm"
    if r.test is Test.ONT_STATUS:
        return "your home box is online" if v.get("reachable") else "your home box is offline"
    if r.test is Test.WIFI_SCAN:
        if not v.get("available"):
            return "no Wi-Fi scan"
        return f"{v.get('neighbours_on_channel')} other networks on your Wi-Fi channel"
    if r.test is Test.BILLING_STATUS:
        return "your account is suspended" if v.get("account") == "suspended" else "your account is in order"
    if r.test is Test.LINE_TEST:
        return _line(v)
    return "measured"


def healthy_words(readings: Iterable[Reading]) -> str:
    """What a healthy line measured: the speed to the box first, then the light."""
    by = {r.test: r for r in readings}
    bits = [reading_words(by[t]) for t in (Test.SPEED_TEST, Test.LIGHT_LEVEL) if t in by]
    return "your line tests healthy" + (f": {', '.join(bits)}" if bits else "")
