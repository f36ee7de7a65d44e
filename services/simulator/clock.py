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
    """Simulated hours, at a speed the console may change while it runs, and that can stand still
    (stopped): the hours reached are kept, and the clock goes on from there."""

    def __init__(self, speed: float, *, now: Callable[[], float] = time.monotonic, running: bool = True):
        self.speed = check_speed(speed)
        self._now = now
        self.started = now()
        self._base_h = 0.0  # hours reached when the speed last changed or the clock stopped
        self._since = self.started
        self.running = running

    def hours(self) -> float:
        """Simulated hours since the clock started (standing still while stopped)."""
        return self._base_h + ((self._now() - self._since) * self.speed if self.running else 0.0)

    def _rebase(self) -> None:
        self._base_h, self._since = self.hours(), self._now()

    def set_speed(self, speed: float) -> None:
        speed = check_speed(speed)
        if speed != self.speed:
            self._rebase()
            self.speed = speed

    def stop(self) -> None:
        if self.running:
            self._rebase()
            self.running = False

    def start(self) -> None:
        if not self.running:
            self._since = self._now()
            self.running = True

    def seconds_until(self, at_h: float) -> float:
        """Wall seconds until simulated hour `at_h` at the present speed (0 when it is already
        past; infinity while stopped)."""
        ahead = at_h - self.hours()
        if ahead <= 0:
            return 0.0
        return ahead / self.speed if self.running else float("inf")
