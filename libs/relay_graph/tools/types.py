"""Argument types shared by the tools' input models (and so by their JSON schemas)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field

from ..models import AGENT_PATTERN
from ..network_models import NODE_ID_PATTERN
from ..registry import REGISTRY

TICKET_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$"


class Args(BaseModel):
    """Tool arguments: unknown fields are refused (a typo must not be silently ignored)."""

    model_config = ConfigDict(extra="forbid")


def _known_predicate(value: str) -> str:
    if value not in REGISTRY:
        raise ValueError(f"unknown predicate {value!r}; known: {', '.join(sorted(REGISTRY))}")
    return value


Name = Annotated[str, Field(min_length=1, max_length=200)]
CustomerName = Annotated[str, Field(min_length=1, max_length=200,
                                    description="a customer's id (e.g. 'c-1f0e4b2a9c3d5e6f'; an older tenant's "
                                                "customers keep their name as their id). Writes address exactly this "
                                                "key; reads also accept a name and say what it matched (`matched`), "
                                                "or that it is ambiguous",
                                    examples=["c-1f0e4b2a9c3d5e6f", "alice rao"])]
Predicate = Annotated[str, AfterValidator(_known_predicate),
                      Field(min_length=1, max_length=64, description="a predicate of the registry",
                            json_schema_extra={"enum": sorted(REGISTRY)})]
NodeId = Annotated[str, Field(pattern=NODE_ID_PATTERN, description="a network node id, e.g. 'pune-olt-1'",
                              examples=["pune-olt-1"])]
TicketId = Annotated[str, Field(pattern=TICKET_ID_PATTERN, description="a ticket id, e.g. 'T-1A2B3C4D5E6F'")]
Role = Annotated[str, Field(pattern=AGENT_PATTERN, description="the role to hand to: intake, resolver or netops "
                                                               "(the desk's agents), or another agent's name")]
Time = Annotated[AwareDatetime, Field(description="ISO 8601 with an offset, e.g. 2026-09-05T10:00:00+00:00")]
