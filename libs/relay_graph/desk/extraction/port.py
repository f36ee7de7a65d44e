"""The port every extractor implements: the rules extractor now, an LLM adapter later, the same
schema out of both. What the desk knows (its cities, plans and router models) comes in through
the context, so the catalogue can be plugged in without the extractor reading the graph."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from relay_graph.desk.extraction.schema import Extraction


class ExtractionContext(BaseModel):
    """Names the desk knows, as the catalogue spells them. Matching is case-insensitive and works
    for several words ("New Delhi", "Fiber 1000", "TP-Link Archer C6"); a recognised name comes
    back spelt as here. Empty tuples are fine: the extractor falls back to its own small lists."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cities: tuple[str, ...] = ()
    plans: tuple[str, ...] = ()
    routers: tuple[str, ...] = ()


@runtime_checkable
class Extractor(Protocol):
    async def extract(self, text: str, context: ExtractionContext) -> Extraction: ...
