"""The LLM side of the desk, all optional: settings, the Groq chat wrapper (retries, backoff,
fallback across keys and models) and reply wording. Without GROQ_API_KEY none of it calls out:
the rules extractor (relay_graph.desk.extraction) and the templated replies do the jobs."""

from relay_graph.desk.llm.client import Attempt, GroqChat, LLMUnavailable, MalformedAnswer
from relay_graph.desk.llm.settings import (
    CHAT_COMPLETIONS_URL,
    DEFAULT_EXTRACT_MODELS,
    DEFAULT_WRITE_MODELS,
    LLMSettings,
)
from relay_graph.desk.llm.wording import GroqWriter, ReplyWriter, TemplateWriter, build_writer

__all__ = [
    "Attempt", "CHAT_COMPLETIONS_URL", "DEFAULT_EXTRACT_MODELS", "DEFAULT_WRITE_MODELS", "GroqChat", "GroqWriter",
    "LLMSettings", "LLMUnavailable", "MalformedAnswer", "ReplyWriter", "TemplateWriter", "build_writer",
]
