"""Argument types shared by the tools' input models (and so by their JSON schemas)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from relay_graph.memory.inputs import AwareTime, Identifier
from relay_graph.memory.inputs import Name as _Name
from relay_graph.memory.inputs import ShortText, Text
from relay_graph.memory.models import AGENT_PATTERN
from relay_graph.desk.network_models import NODE_ID_PATTERN
from relay_graph.memory.registry import NAME_PATTERN, predicates_described


class Args(BaseModel):
    """Tool arguments: unknown fields are refused (a typo must not be silently ignored)."""

    model_config = ConfigDict(extra="forbid")


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
Time = AwareTime

__all__ = ["Args", "CustomerName", "Identifier", "Name", "NodeId", "Predicate", "Role", "ShortText", "Text",
           "TicketId", "Time"]
