"""Deciding what is wrong from readings alone: a pure function any agent may call.

The order matters and follows how a field engineer reasons, cheapest certainty first:
1. billing suspended                                   -> payment_failed (no network fault at all)
2. line test: no working path to the core, with a break
   - at the cabinet or the drop to the home            -> cut_street_cable
   - at an exchange, a hub or the core                 -> hub_link_down
   line test: service runs over a standby uplink        -> hub_link_backup
3. light at the home box far below its sensitivity     -> damaged_fibre (the line itself is whole)
   (or the box reports loss of signal and no light reading was taken)
4. the box gets light but answers nothing              -> router_frozen
5. the hub's evening peak (or its load now, in the
   evening) at 90 % or more                            -> evening_congestion
6. a crowded Wi-Fi channel while wired speed is fine   -> wifi_interference
7. a captive portal on the speed test (billing unread) -> payment_failed
otherwise None: the readings look healthy."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from relay_graph.lab.models import FaultKind, Reading, Test

DAMAGED_BELOW_DBM = -27.0
CONGESTED_AT_PCT = 90.0
CROWDED_NEIGHBOURS = 8
CROWDED_AIRTIME_PCT = 70.0
WIRED_OK_SHARE = 0.6
STREET_LEVELS = frozenset({"home", "street"})
UPSTREAM_LEVELS = frozenset({"exchange", "hub", "core"})


def _latest(readings: Iterable[Reading | Mapping[str, Any]]) -> dict[Test, Mapping[str, Any]]:
    out: dict[Test, Mapping[str, Any]] = {}
    for r in readings:
        if isinstance(r, Reading):
            out[r.test] = r.values
        else:
            out[Test(r["test"])] = r.get("values") or {}
    return out


def diagnose_from_readings(readings: Iterable[Reading | Mapping[str, Any]]) -> FaultKind | None:
    """The fault kind the readings point to, or None when they look healthy. Takes Reading objects
    or {"test", "values"} maps; when a test appears twice the later reading counts."""
    by = _latest(readings)

    billing = by.get(Test.BILLING_STATUS)
    if billing and billing.get("account") == "suspended":
        return FaultKind.PAYMENT_FAILED

    line = by.get(Test.LINE_TEST)
    if line and line.get("connected", True):
        levels = {d.get("level") for d in line.get("down") or []}
        if not line.get("reaches_core", True):
            if levels & STREET_LEVELS:
                return FaultKind.CUT_STREET_CABLE
            if levels & UPSTREAM_LEVELS:
                return FaultKind.HUB_LINK_DOWN
        elif line.get("via_backup"):
            return FaultKind.HUB_LINK_BACKUP

    light = by.get(Test.LIGHT_LEVEL)
    ont = by.get(Test.ONT_STATUS)
    if light and light.get("available") and light.get("rx_dbm") is not None:
        if light["rx_dbm"] < DAMAGED_BELOW_DBM:
            return FaultKind.DAMAGED_FIBRE
    elif ont and ont.get("state") == "los":
        return FaultKind.DAMAGED_FIBRE

    if ont and ont.get("state") == "unresponsive":
        return FaultKind.ROUTER_FROZEN

    speed = by.get(Test.SPEED_TEST)
    if speed:
        peak = speed.get("hub_peak_utilisation_pct") or 0.0
        now = speed.get("hub_utilisation_pct") or 0.0
        if peak >= CONGESTED_AT_PCT or (speed.get("evening") and now >= CONGESTED_AT_PCT):
            return FaultKind.EVENING_CONGESTION

    wifi = by.get(Test.WIFI_SCAN)
    if wifi and wifi.get("available"):
        crowded = ((wifi.get("neighbours_on_channel") or 0) >= CROWDED_NEIGHBOURS
                   or (wifi.get("channel_utilisation_pct") or 0.0) >= CROWDED_AIRTIME_PCT)
        wired_ok = (speed is None or not speed.get("reachable")
                    or (speed.get("wired_mbps") or 0.0) >= WIRED_OK_SHARE * (speed.get("plan_mbps") or 0.0))
        if crowded and wired_ok:
            return FaultKind.WIFI_INTERFERENCE

    if speed and speed.get("captive_portal"):
        return FaultKind.PAYMENT_FAILED
    return None


__all__ = ["diagnose_from_readings"]
