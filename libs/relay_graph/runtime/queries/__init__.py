"""Named, parameterised Cypher, one module per aggregate. Callers pass values only as parameters."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Query:
    """A named statement. `read_only`: it changes nothing (run as GRAPH.RO_QUERY, on a replica in a
    cluster). `read_receipt`: it writes only the trace a read leaves (who consulted what), so the
    read that runs it is still a read for the one-door rule (tests/test_architecture.py, rule 8).
    `housekeeping`: a poll every process runs on a timer (the outbox relay's); the shared query log
    keeps its runs in a stream of their own (runtime/query_log.py), so they never push out the
    queries a person wants to see."""

    name: str
    cypher: str
    read_only: bool = False
    read_receipt: bool = False
    housekeeping: bool = False

    def __post_init__(self) -> None:
        if self.read_only and self.read_receipt:
            raise ValueError(f"{self.name}: a read receipt writes; it cannot be read_only")
