"""Times as the graph stores them: UTC milliseconds since the epoch. Every layer converts here."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Any


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def now_ms() -> int:
    """Now, in stored milliseconds."""
    return time.time_ns() // 1_000_000


def aware(value: datetime | None) -> datetime | None:
    """Times without an offset are refused upstream; here naive ones are taken as UTC."""
    if value is None:
        return None
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def ms_of(at: datetime) -> int:
    """A datetime's stored milliseconds (truncated, as every writer has stored them)."""
    return int(at.timestamp() * 1000)


def from_ms(ms: Any) -> datetime | None:
    """The aware UTC datetime of a stored millisecond count (an int or its text); None for None."""
    return None if ms is None else datetime.fromtimestamp(int(ms) / 1000, tz=timezone.utc)


__all__ = ["aware", "from_ms", "ms_of", "now_ms", "utcnow"]
