"""Request and response bodies of the HTTP API, mirroring CONTRACT.md. Shapes that match the
engine's models are those models; request bodies refuse unknown fields and times without an offset."""

from __future__ import annotations

import re
from datetime import datetime
from enum import Enum
from typing import Annotated, Any

from pydantic import AwareDatetime, BaseModel, BeforeValidator, ConfigDict, Field

from relay_graph.models import (
    AGENT_PATTERN,
    ClaimsView,
    EpisodeInput,
    FactInput,
    FactView,
    FactWriteResult,
    RecallResult,
    RetireInput,
    SettleResult,
)

__all__ = [
    "ApiTime", "ClaimsView", "EpisodesBody", "EpisodesResult", "FactBody", "FactView", "FactWriteResult",
    "FactsResult", "RecallResult", "RetireBody", "RetiredResult", "SettleBody", "SettleResult", "TenantBody",
    "TenantCreated", "to_json",
]

_SPACE_OFFSET = re.compile(r"(T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?) (\d{2}(?::?\d{2})?)$")


def _plus_from_query(value: Any) -> Any:
    # An unencoded "+00:00" in a query string arrives as " 00:00"; read it as the "+" it was.
    if isinstance(value, str):
        return _SPACE_OFFSET.sub(r"\1+\2", value.strip())
    return value


# ISO 8601 with an offset; a time without one is refused (422), never guessed.
ApiTime = Annotated[AwareDatetime, BeforeValidator(_plus_from_query)]

Agent = Annotated[str, Field(pattern=AGENT_PATTERN, description="the writing agent's id", examples=["intake"])]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TenantBody(Strict):
    tenant: str = Field(max_length=63, description="^[a-z0-9][a-z0-9-]{1,62}$", examples=["acme"])


class TenantCreated(BaseModel):
    tenant: str
    api_key: str = Field(description="shown once; send it as `Authorization: Bearer <key>`")


class FactBody(Strict):
    subject: str = Field(min_length=1, max_length=200, examples=["alice rao"])
    predicate: str = Field(min_length=1, max_length=64, examples=["lives_in"])
    object: str = Field(min_length=1, max_length=200, examples=["pune"])
    agent: Agent
    valid_from: ApiTime | None = Field(default=None, description="when it became true; default now")
    source: str | None = Field(default=None, max_length=200, description="e.g. the episode it came from")

    def to_input(self) -> FactInput:
        # recorded_at is always the server's now at the API: the belief clock is not client-settable.
        return FactInput(**self.model_dump())


class RetireBody(Strict):
    subject: str = Field(min_length=1, max_length=200)
    predicate: str = Field(min_length=1, max_length=64)
    object: str | None = Field(default=None, min_length=1, max_length=200,
                               description="one value of a multi-valued predicate; default all")
    agent: Agent
    valid_to: ApiTime | None = Field(default=None, description="when it stopped being true; default now")

    def to_input(self) -> RetireInput:
        return RetireInput(**self.model_dump())


class RetiredResult(BaseModel):
    retired: list[str]


class FactsResult(BaseModel):
    facts: list[FactView]


class SettleBody(Strict):
    fact_id: str = Field(min_length=1, max_length=128, description="the claim that is right")
    by: str = Field(min_length=1, max_length=128, description="the person settling it")


class EpisodeBody(EpisodeInput):
    """One turn of any conversation."""

    at: ApiTime  # type: ignore[assignment]


class EpisodesBody(Strict):
    episodes: list[EpisodeBody] = Field(min_length=1, max_length=500)


class EpisodesResult(BaseModel):
    episode_ids: list[str]


def to_json(value: Any) -> Any:
    """JSON-ready data with every time as ISO 8601 with a numeric offset ("+00:00", not "Z")."""
    if isinstance(value, BaseModel):
        return to_json(value.model_dump(mode="python"))
    if isinstance(value, datetime):
        return value.isoformat() if value.tzinfo else value.isoformat() + "+00:00"
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    return value
