"""Simulated time: hours of the customers' lives mapped onto wall-clock seconds.

At `speed` simulated hours per wall second (from 1/2 to 8), an event planned at simulated hour
`h` is due `h / speed` seconds after the clock started: a fortnight of 12 customers takes about
five and a half minutes at speed 1, forty seconds at speed 8. The desk itself stamps every turn
with the real time it arrived (the chat API takes no event time), so simulated time paces the
run; what customers say about time ("since last night", "we moved last week") is in their words."""

from __future__ import annotations

import time
from typing import Callable

MIN_SPEED = 0.5
MAX_SPEED = 8.0


def check_speed(speed: float) -> float:
    if isinstance(speed, bool) or not isinstance(speed, (int, float)) or not MIN_SPEED <= speed <= MAX_SPEED:
        raise ValueError(f"speed is simulated hours per second, from {MIN_SPEED:g} to {MAX_SPEED:g}; got {speed!r}")
    return float(speed)


class SimClock:
    def __init__(self, speed: float, *, now: Callable[[], float] = time.monotonic):
        self.speed = check_speed(speed)
        self._now = now
        self.started = now()

    def hours(self) -> float:
        """Simulated hours since the clock started."""
        return (self._now() - self.started) * self.speed

    def seconds_until(self, at_h: float) -> float:
        """Wall seconds until simulated hour `at_h` (0 when it is already past)."""
        return max(0.0, at_h / self.speed - (self._now() - self.started))
