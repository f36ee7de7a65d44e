"""What every tool answers: one envelope, whatever the tool.

    {"tool": "facts_at", "shape": "answered", "data": {...}, "how_i_know": ["fact 3f..: ..."],
     "unknown": [], "message": null}

- `answered`: the graph answered; `how_i_know` lists the rows (facts, tickets, outages, paths)
  the answer rests on.
- `memory`: answered from memory only (recall/ask): episodes similar in meaning, with no named
  entity connecting the question to them.
- `not_in_graph`: every name is known, but nothing connects them or there is nothing to report.
- `unknown_name`: a name in the arguments matched nothing in the graph; `unknown` says which.
  Resolution is the only thing that ran: no other query, no write.
- `ambiguous`: a name in the arguments stands for two or more (customers called alike);
  `ambiguous` lists the candidates and `message` asks "did you mean ...?". Nothing else ran.

An answer read for a name other than the one given (a customer's name rather than their id, or a
name spelt alike) says so in `matched`.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, Field

from relay_graph.memory.models import Ambiguous, Matched

OutT = TypeVar("OutT")


class Shape(str, Enum):
    ANSWERED = "answered"
    MEMORY = "memory"
    NOT_IN_GRAPH = "not_in_graph"
    UNKNOWN_NAME = "unknown_name"
    AMBIGUOUS = "ambiguous"


class UnknownName(BaseModel):
    """A name from the arguments that resolved to nothing."""

    argument: str = Field(description="the argument that held it, e.g. `customer`")
    kind: str = Field(description="what it should have named: customer, entity, node, ticket, issue, fact")
    name: str = Field(description="the name as given")


class ToolResult(BaseModel, Generic[OutT]):
    tool: str
    shape: Shape
    data: OutT | None = Field(default=None, description="the tool's typed output; null for unknown_name")
    how_i_know: list[str] = Field(default_factory=list, description="the graph rows the answer rests on")
    unknown: list[UnknownName] = Field(default_factory=list, description="names that resolved to nothing")
    ambiguous: list[Ambiguous] = Field(default_factory=list,
                                       description="names that stand for two or more; nothing was read")
    matched: list[Matched] = Field(default_factory=list,
                                   description="names read as another name on file (a customer's name, a misspelling)")
    message: str | None = Field(default=None, description="a short human reading of the shape")

    def to_json(self) -> dict[str, Any]:
        return jsonable(self)


def jsonable(value: Any) -> Any:
    """JSON-ready data with every time as ISO 8601 with a numeric offset ("+00:00", not "Z"), as the
    HTTP API writes them."""
    if isinstance(value, BaseModel):
        return jsonable(value.model_dump(mode="python", by_alias=True))
    if isinstance(value, datetime):
        return value.isoformat() if value.tzinfo else value.isoformat() + "+00:00"
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    return value


def when(at: datetime | None) -> str:
    """A time as the how_i_know lines write it."""
    return "?" if at is None else jsonable(at)
