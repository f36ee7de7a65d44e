"""Keeps `relay up`'s one FalkorDB server running, as compose's `restart: unless-stopped` keeps
its container: a server that exits is started again after a backoff, on the same port, data
folder, configuration and password (SupervisedFalkorDB.launch runs the one command it started
with), so it reloads its append-only file and the services' clients reconnect to it. More than
`max_restarts` exits (or failed starts) within `window_s` seconds and it is broken: `check`
raises FalkorDBGaveUp, whose message says so in plain words with the tail of the server's log,
and `relay up` stops everything.

`check` never blocks on the server: while it waits for its backoff or for the restarted server
to load its data, the services are still watched and Ctrl-C is still heard."""

from __future__ import annotations

import time
from typing import Callable

from relay_cli.supervisor import Deaths, SupervisedFalkorDB, tail


class FalkorDBGaveUp(RuntimeError):
    pass


class FalkorDBKeeper:
    UP, WAITING, STARTING = "up", "waiting", "starting"

    def __init__(self, server: SupervisedFalkorDB, *, say: Callable[[str], None], max_restarts: int = 5,
                 window_s: float = 60.0, max_backoff_s: float = 30.0, start_timeout_s: float = 120.0,
                 on_change: Callable[[], None] = lambda: None):
        self.server = server
        self.say = say
        self.deaths = Deaths(max_restarts, window_s, max_backoff_s)
        # A restarted server that neither answers nor exits within this long is killed and counted
        # as a failed start (loading a large append-only file takes a while: see embedded.py).
        self.start_timeout_s = start_timeout_s
        self.on_change = on_change
        self.state = self.UP
        self.down_since: float | None = None
        self.restart_at = 0.0
        self.started_at = 0.0
        self.restarts = 0  # times it came back
        self.last_downtime_s: float | None = None

    @property
    def up(self) -> bool:
        return self.state == self.UP

    def check(self, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        server = self.server
        if self.state == self.UP:
            if server.process is not None and server.process.poll() is not None:
                self.down_since = now
                self._failed(now, f"exited with code {server.process.returncode}")
        elif self.state == self.WAITING:
            if now >= self.restart_at:
                try:
                    server.launch()
                except RuntimeError as exc:
                    self._failed(now, f"could not be started again: {exc}")
                    return
                self.state, self.started_at = self.STARTING, now
                self.say(f"falkordb: started again (pid {server.process.pid}); loading its data ...")
        elif server.process.poll() is not None:
            self._failed(now, f"exited with code {server.process.returncode} while starting again")
        elif server.answers():
            self.state = self.UP
            self.restarts += 1
            self.last_downtime_s = now - self.down_since
            self.on_change()  # first: whoever reads the message finds the new pid in the state
            self.say(f"falkordb: back after {self.last_downtime_s:.1f}s (pid {server.process.pid}); "
                     "the services reconnect to it")
        elif now - self.started_at > self.start_timeout_s:
            server.process.kill()
            server.process.wait()
            self._failed(now, f"did not answer within {self.start_timeout_s:g}s of starting again; killed it")

    def _failed(self, now: float, what: str) -> None:
        delay = self.deaths.add(now)
        if delay is None:
            raise FalkorDBGaveUp(
                f"FalkorDB {what}. It stopped {len(self.deaths)} times within {self.deaths.window_s:g}s, "
                f"so it is not started again: stopping everything. Its log says why; the last lines of "
                f"{self.server.log_path}:\n{tail(self.server.log_path)}"
            )
        self.state, self.restart_at = self.WAITING, now + delay
        self.say(f"falkordb: {what}; starting it again in {delay:g}s on the same data folder "
                 f"(/readyz answers 503 meanwhile; log: {self.server.log_path})")
