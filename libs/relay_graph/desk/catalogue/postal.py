"""Postal codes the offline gazetteer knows: India's six-digit PIN codes, from the India Post dataset
that the `bharatpin` package ships (its `data/pincodes.csv`: every post office with its PIN code,
district and coordinates).

The dataset is read once per process into a small table (a PIN code, the name of its main delivery
office's area, its district and the mean position of its post offices), not through bharatpin's own
indexes, which hold every office in memory (about 200 MB) for searches we never make.

A code counts only when the text says it is an address ("pin code 560034", "I live at 560034",
"Flat 2, 12th Main, 560102"): a six-digit number alone may be an OTP, an amount or an order.
Other countries' postal codes are not known offline (see `codes_in`)."""

from __future__ import annotations

import csv
import re
import threading
from dataclasses import dataclass
from importlib import resources

# "560034", "560 034"; not part of a longer number, a phone number or an amount
_PIN = re.compile(r"(?<![\d+₹$€£.,-])([1-9]\d{2})\s?(\d{3})(?![\d.,]*\d)(?!\s*(?:rs|inr|rupees|mbps|gb|%))", re.I)
_ADDRESS_CUE = re.compile(
    r"\b(?:pin|pincode|pin\s*code|postal\s*code|post\s*code|zip(?:\s*code)?|address|live|living|lives|located"
    r"|moved|moving|shifted|flat|house|apartment|apt|floor|street|st|road|rd|lane|main|cross|nagar|colony|sector"
    r"|layout|block|phase|stage)\b", re.I)
_NOT_ADDRESS = re.compile(r"\b(?:otp|order|ticket|invoice|account|ref|reference|transaction|txn|amount|paid|charged"
                          r"|bill|id|serial|imei)\b", re.I)


@dataclass(frozen=True, slots=True)
class PostalPlace:
    code: str
    country: str  # ISO 3166 alpha-2
    name: str  # the area of its main delivery office ("Koramangala")
    district: str
    lat: float
    lon: float


def codes_in(text: str) -> list[str]:
    """The PIN codes a text gives as an address, in order (none when it reads as another number)."""
    if not _ADDRESS_CUE.search(text) or _NOT_ADDRESS.search(text):
        return []
    return list(dict.fromkeys(a + b for a, b in _PIN.findall(text)))


_RANK = {"HO": 0, "SO": 1, "BO": 2}  # head office, sub office, branch office: the main one names the code


def _load() -> dict[str, PostalPlace]:
    offices: dict[str, list[tuple[int, str, str, float, float]]] = {}
    with (resources.files("bharatpin") / "data" / "pincodes.csv").open(encoding="utf-8", newline="") as f:
        rows = csv.reader(f)
        head = next(rows)
        pin, area, kind, delivery, district, lat_at, lon_at = (head.index(c) for c in (
            "pincode", "area", "officetype", "delivery", "district", "latitude", "longitude"))
        for row in rows:
            try:
                lat, lon = float(row[lat_at]), float(row[lon_at])
            except (IndexError, ValueError):
                continue
            if not (6.0 <= lat <= 37.5 and 68.0 <= lon <= 97.5):  # outside India: a bad coordinate
                continue
            rank = _RANK.get(row[kind], 3) + (0 if row[delivery] == "Delivery" else 4)
            offices.setdefault(row[pin], []).append((rank, row[area], row[district], lat, lon))
    table = {}
    for code, rows in offices.items():
        rows.sort()
        _, area, district, _, _ = rows[0]
        table[code] = PostalPlace(code, "IN", area, district, sum(r[3] for r in rows) / len(rows),
                                  sum(r[4] for r in rows) / len(rows))
    return table


_lock = threading.Lock()
_table: dict[str, PostalPlace] | None = None


def table() -> dict[str, PostalPlace]:
    """Every PIN code with a position, built once per process (threads asking at once wait for one)."""
    global _table
    if _table is None:
        with _lock:
            if _table is None:
                _table = _load()
    return _table


def lookup(code: str) -> PostalPlace | None:
    return table().get(code)


__all__ = ["PostalPlace", "codes_in", "lookup", "table"]
