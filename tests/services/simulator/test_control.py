"""The console's control over the simulator (pure logic): the simulated clock keeps the hours it
reached across a new speed and stands still while stopped; a control is applied once per version."""

from __future__ import annotations

import math

import pytest

from services.simulator.clock import SimClock
from services.simulator.service import Live
from services.simulator.settings import SimulatorSettings


class Wall:
    def __init__(self):
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_a_new_speed_keeps_the_hours_reached_and_stopping_holds_the_clock():
    wall = Wall()
    clock = SimClock(1.0, now=wall)
    wall.t += 2
    assert clock.hours() == 2.0
    clock.set_speed(8)
    wall.t += 0.5
    assert clock.hours() == 6.0 and clock.seconds_until(14.0) == 1.0
    clock.stop()
    wall.t += 60
    assert clock.hours() == 6.0 and math.isinf(clock.seconds_until(7.0)) and clock.seconds_until(5.0) == 0.0
    clock.start()
    wall.t += 0.25
    assert clock.hours() == 8.0
    with pytest.raises(ValueError):
        clock.set_speed(9)
    assert SimClock(2.0, now=wall, running=False).hours() == 0.0


def test_a_control_is_applied_once_per_version_to_the_round_being_played():
    live = Live(SimulatorSettings(speed=1.0, heartbeat=False))
    live.apply(None)  # never set: the settings' speed, playing
    assert (live.speed, live.running, live.version) == (1.0, True, 0)
    wall = Wall()
    live.clock = SimClock(live.speed, now=wall)
    live.apply({"running": False, "speed": 4.0, "version": 3})
    assert (live.clock.running, live.clock.speed, live.status()["state"]) == (False, 4.0, "stopped")
    live.apply({"running": True, "speed": 0.5, "version": 2})  # an older one: ignored
    assert live.running is False and live.status()["control_version"] == 3
    live.apply({"running": True, "speed": 0.5, "version": 4})
    assert (live.clock.running, live.clock.speed) == (True, 0.5)
    live.between = False
    status = live.status()
    assert (status["state"], status["speed"], status["doing"]) == ("playing", 0.5, [])
    assert live.new_clock().speed == 0.5  # the next round starts at the control's speed
