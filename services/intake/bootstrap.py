"""Composition root of the intake agent: Deps with a graph client, Memory, the streams' Redis and
Publisher, a clock and an extractor. Tests pass any of them in (see build_deps)."""

from __future__ import annotations

import logging
from typing import Any

from relay_graph.agents import Deps, build_deps
from relay_graph.extraction import RulesExtractor

from .settings import SERVICE, IntakeSettings

log = logging.getLogger("services.intake")


def make_extractor(settings: IntakeSettings) -> Any:
    """The rules extractor; an LLM adapter takes over when GROQ_API_KEY is set and one exists."""
    if settings.groq_key:
        try:
            from relay_graph.extraction.groq import GroqExtractor  # type: ignore[import-not-found]
        except ImportError:
            log.warning("GROQ_API_KEY is set but no Groq extractor is installed; using the rules extractor")
        else:
            return GroqExtractor(settings.groq_key)
    return RulesExtractor()


async def bootstrap(settings: IntakeSettings | None = None, **overrides: Any) -> Deps:
    settings = settings or IntakeSettings()
    if overrides.get("extractor") is None:
        overrides["extractor"] = make_extractor(settings)
    return await build_deps(SERVICE, settings, **overrides)
