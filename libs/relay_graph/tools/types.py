"""Argument types shared by the tools' input models (and so by their JSON schemas)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from relay_graph.memory.inputs import AwareTime, Identifier
from relay_graph.memory.inputs import Name as _Name
from relay_graph.memory.inputs import ShortText, Text
from relay_graph.memory.models import AGENT_PATTERN
from relay_graph.desk.network.models import NODE_ID_PATTERN
from relay_graph.memory.registry import NAME_PATTERN, predicates_described


class Args(BaseModel):
    """Tool arguments: unknown fields are refused (a typo must not be silently ignored), and every
    value has the JSON type its schema states (strict): `false` is not the number 0, `0` is not
    false, `"3"` is not 3. Times and enums are the exceptions, read from their strings (Lax)."""

    model_config = ConfigDict(extra="forbid", strict=True)


# A field that JSON can only send as a string (a time, an enum's value): strict mode would want the
# Python object itself.
Lax = Field(strict=False)


def _whole(value: object) -> object:
    # JSON Schema's integer is any number without a fraction part, 3.0 too; a bool or "3" is none.
    return int(value) if isinstance(value, float) and value.is_integer() else value


def whole(low: int, high: int):
    """A count or a depth from `low` to `high`: the integer JSON Schema means (5.0 too; no bool, no
    string). The bounds are part of the type: given beside it in a Field, pydantic would write them
    into the schema as `ge`/`le`, keywords no JSON Schema tool reads."""
    return Annotated[int, Field(ge=low, le=high), BeforeValidator(_whole)]


# The shared input types (relay_graph.memory.inputs): the same checks as the REST API and the engine.
Name = _Name
CustomerName = Annotated[_Name, Field(description="a customer's id (e.g. 'c-1f0e4b2a9c3d5e6f'; an older tenant's "
                                                  "customers keep their name as their id). Writes address exactly this "
                                                  "key; reads also accept a name and say what it matched (`matched`), "
                                                  "or that it is ambiguous",
                                      examples=["c-1f0e4b2a9c3d5e6f", "alice rao"])]
# A built-in predicate or one of the tenant's own (define_predicate): the engine answers any other
# with `unknown_predicate`, from the tenant's vocabulary.
Predicate = Annotated[str, Field(pattern=NAME_PATTERN, min_length=2, max_length=48,
                                 json_schema_extra=predicates_described)]
NodeId = Annotated[str, Field(pattern=NODE_ID_PATTERN, description="a network node id, e.g. 'pune-olt-1'",
                              examples=["pune-olt-1"])]
TicketId = Annotated[Identifier, Field(description="a ticket id, e.g. 'T-1A2B3C4D5E6F'")]
Role = Annotated[str, Field(pattern=AGENT_PATTERN, description="the role to hand to: intake, resolver or netops "
                                                               "(the desk's agents), or another agent's name")]
Time = Annotated[AwareTime, Lax]  # from its ISO string; a number is still refused (inputs._iso_only)

__all__ = ["Args", "CustomerName", "Identifier", "Lax", "Name", "NodeId", "Predicate", "Role", "ShortText", "Text",
           "TicketId", "Time", "whole"]
