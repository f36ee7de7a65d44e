"""The benchmark's small world: the values answers are made of (cities, plans, routers, devices,
issue kinds, fixes, agents) and how each is spotted in text.

The storyline draws from these lists; the reader recognises the same lists in whatever lines a
system hands it. One vocabulary for both systems: a stand-in for a model's knowledge of English,
not for knowledge of the answers."""

from __future__ import annotations

import re

from services.simulator.world import PLANS, ROUTERS

# Cities the simulator's phrasings use that the India desk also serves (so a line can be connected).
CITIES: tuple[str, ...] = ("Pune", "Mumbai", "Bengaluru", "Hyderabad", "Chennai", "Kolkata", "Ahmedabad", "Jaipur",
                           "Lucknow", "Indore", "Nagpur")
REGION = "india"
PLAN_NAMES: tuple[str, ...] = PLANS
ROUTER_NAMES: tuple[str, ...] = ROUTERS
DEVICES: tuple[str, ...] = ("mesh extender", "set-top box", "smart TV", "VoIP adapter", "powerline adapter",
                            "security camera", "gaming console")

# The desk's own agents write as intake; the rest are people and systems named in the storyline.
FIELD_TECH = "field_tech"
RETAIL = "retail_desk"
NIGHT = "night_desk"
DAY = "day_desk"
NETOPS = "netops_staff"
# A late correction comes from the records office, with its own key: against intake's value it is a
# claim, which a person settles (bench.memory.loader).
RECORDS = "records"
AGENTS: tuple[str, ...] = (FIELD_TECH, RETAIL, NIGHT, DAY, NETOPS)

# Issue kinds (the desk's IssueKind values) with the words that say them.
ISSUE_WORDS: dict[str, tuple[str, ...]] = {
    "no_signal_light": ("no_signal_light", "los light", "red light", "blinking red"),
    "no_connection": ("no_connection", "internet is down", "no internet", "can't get online",
                      "connection has been down", "no connection", "fibre is not working"),
    "slow_speed": ("slow_speed", "slow", "buffering", "take forever", "sluggish", "speeds are terrible"),
    "wifi_drops": ("wifi_drops", "wifi"),
    "intermittent": ("intermittent", "dropping every", "dropping out", "going down and coming back", "unstable"),
    "router_frozen": ("router_frozen", "rebooting", "stuck and won't", "frozen", "keeps restarting"),
    "billing_double_charge": ("billing_double_charge", "charged twice", "double charge", "two times", "debited twice",
                              "two charges"),
}
ISSUE_LABEL: dict[str, str] = {
    "no_signal_light": "red LOS light", "no_connection": "no internet", "slow_speed": "slow speeds",
    "wifi_drops": "wifi dropping", "intermittent": "unstable line", "router_frozen": "frozen router",
    "billing_double_charge": "double charge",
}
# What an engineer can do about each kind (none of these words says an issue).
FIXES: dict[str, tuple[str, ...]] = {
    "no_signal_light": ("replaced the fibre patch cord", "cleaned the fibre connector", "re-spliced the drop cable"),
    "no_connection": ("reprovisioned the line at the exchange", "replaced the ONT power adapter",
                      "power-cycled the ONT"),
    "slow_speed": ("moved the line to a new cabinet port", "upgraded the router firmware",
                   "removed a speed cap on the account"),
    "wifi_drops": ("moved the access point to the hallway", "switched the radio to the 5 GHz band",
                   "set a fixed radio channel"),
    "intermittent": ("replaced the corroded wall socket", "tightened the loose drop connector",
                     "swapped the faulty splitter port"),
    "router_frozen": ("applied the vendor firmware patch", "did a factory reset of the router",
                      "replaced the router's power supply"),
    "billing_double_charge": ("refunded the duplicate payment", "reversed the second card debit",
                              "cancelled the duplicate invoice"),
}
ALL_FIXES: tuple[str, ...] = tuple(f for fs in FIXES.values() for f in fs)
NEGATIONS = ("did not help", "didn't help", "no luck", "made no difference", "did not work")
OUTAGE_WORDS = ("outage",)
PREDICATE_CUES: dict[str, tuple[str, ...]] = {
    "lives_in": ("live", "living", "moved", "relocated", "based"),
    "on_plan": ("plan", "upgraded", "switched"),
    "has_router": ("router",),
}
PHONE_RX = re.compile(r"\+?\d[\d ()-]{5,}\d")
EMAIL_RX = re.compile(r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}")


def _word_rx(value: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w-])" + re.escape(value.lower()) + r"(?![\w-])")


_RX: dict[str, re.Pattern[str]] = {}


def mentions(text: str, values: tuple[str, ...]) -> list[tuple[int, str]]:
    """(position, value) of every value the text names, whole words, any case, in text order."""
    low = text.lower()
    out = []
    for v in values:
        rx = _RX.get(v) or _RX.setdefault(v, _word_rx(v))
        out += [(m.start(), v) for m in rx.finditer(low)]
    return sorted(out)


def issues_in(text: str) -> set[str]:
    low = text.lower()
    return {kind for kind, words in ISSUE_WORDS.items() if any(w in low for w in words)}


def digits(phone: str) -> str:
    return re.sub(r"\D", "", phone)
