"""Named, parameterised Cypher, one module per aggregate. Callers pass values only as parameters."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Query:
    name: str
    cypher: str
    read_only: bool = False
