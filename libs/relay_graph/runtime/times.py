"""Times as the graph stores them: UTC milliseconds since the epoch. Every layer converts here."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any


def from_ms(ms: Any) -> datetime | None:
    """The aware UTC datetime of a stored millisecond count (an int or its text); None for None."""
    return None if ms is None else datetime.fromtimestamp(int(ms) / 1000, tz=timezone.utc)


__all__ = ["from_ms"]
