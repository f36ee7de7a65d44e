"""Extractors in a chain, and the one place that decides which chain a process gets.

`build_extractor(settings)`: no Groq key -> the rules extractor alone (nothing ever calls Groq);
a key -> Groq first, the rules extractor when Groq has no usable answer (every key and model
rate limited, down, or answering badly). Both give the same schema to the same write path."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import httpx

from relay_graph.runtime.errors import InvalidInput
from relay_graph.desk.llm.settings import LLMSettings
from relay_graph.desk.extraction.port import ExtractionContext, Extractor
from relay_graph.desk.extraction.rules import RulesExtractor
from relay_graph.desk.extraction.schema import Extraction

log = logging.getLogger("relay_graph.desk.extraction")


class FallbackExtractor:
    """The first extractor that answers. Bad input (InvalidInput) is the caller's fault and is
    raised at once; any other failure hands the message to the next extractor. `last_used` names
    the one that answered last (for logs, metrics and tests)."""

    def __init__(self, extractors: Sequence[Extractor]) -> None:
        if not extractors:
            raise InvalidInput("a fallback chain needs at least one extractor")
        self.extractors = list(extractors)
        self.last_used: str | None = None

    async def extract(self, text: str, context: ExtractionContext) -> Extraction:
        error: Exception | None = None
        for ex in self.extractors:
            try:
                result = await ex.extract(text, context)
            except InvalidInput:
                raise
            except Exception as e:  # noqa: BLE001 - any failure of one adapter is the next one's turn
                log.warning("%s failed (%s: %s); trying the next extractor", type(ex).__name__, type(e).__name__, e)
                error = e
                continue
            self.last_used = type(ex).__name__
            return result
        assert error is not None
        raise error

    async def aclose(self) -> None:
        for ex in self.extractors:
            close = getattr(ex, "aclose", None)
            if close is not None:
                await close()


def build_extractor(settings: Any = None, *, transport: httpx.AsyncBaseTransport | None = None,
                    **chat_options: Any) -> Extractor:
    """RulesExtractor without a key; FallbackExtractor([GroqExtractor, RulesExtractor]) with one.
    `settings`: a process's settings (anything with `groq_key`, e.g. AgentSettings) or LLMSettings."""
    llm = LLMSettings.from_settings(settings)
    if not llm.enabled:
        return RulesExtractor()
    from relay_graph.desk.extraction.groq import GroqExtractor  # only a process with a key loads the SDK

    return FallbackExtractor([GroqExtractor.from_settings(llm, transport=transport, **chat_options), RulesExtractor()])
