"""Composition root of the intake agent: Deps with a graph client, Memory, the streams' Redis and
Publisher, a clock and an extractor. Tests pass any of them in (see relay_graph.usecases.context.build_deps)."""

from __future__ import annotations

from typing import Any

from relay_graph.usecases.context import Deps, build_deps
from relay_graph.desk.extraction.fallback import build_extractor

from .settings import SERVICE, IntakeSettings


def make_extractor(settings: IntakeSettings) -> Any:
    """The rules extractor without GROQ_API_KEY; with one, Groq first and the rules extractor as
    the last fallback (relay_graph.desk.extraction.fallback)."""
    return build_extractor(settings)


async def bootstrap(settings: IntakeSettings | None = None, **overrides: Any) -> Deps:
    settings = settings or IntakeSettings()
    if overrides.get("extractor") is None:
        overrides["extractor"] = make_extractor(settings)
    return await build_deps(SERVICE, settings, **overrides)
