"""What the LLM adapters need: keys, models, and how hard to try before giving the job back to the
rules extractor and the templates.

Not a pydantic-settings class of its own (a process has exactly one): `LLMSettings.from_settings`
reads the process's settings object, whatever service it belongs to. `GROQ_API_KEY` may hold
several keys separated by commas; with none, nothing ever calls Groq."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

# The Groq SDK's base URL: it appends /openai/v1/chat/completions itself.
GROQ_BASE_URL = "https://api.groq.com"
CHAT_COMPLETIONS_URL = GROQ_BASE_URL + "/openai/v1/chat/completions"

# Strict json_schema output (constrained decoding) is what extraction relies on; on Groq these
# models support `strict: true`.
DEFAULT_EXTRACT_MODELS: tuple[str, ...] = ("openai/gpt-oss-120b", "openai/gpt-oss-20b")
# Wording is plain text: fast general models, each a fallback for the one before.
DEFAULT_WRITE_MODELS: tuple[str, ...] = ("llama-3.3-70b-versatile", "openai/gpt-oss-20b")


def split_keys(raw: str | None) -> list[str]:
    """"k1,k2" or "k1 k2" -> ["k1", "k2"]; empty parts and repeats dropped, order kept."""
    out: list[str] = []
    for part in re.split(r"[\s,;]+", raw or ""):
        if part and part not in out:
            out.append(part)
    return out


class LLMSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    api_keys: tuple[SecretStr, ...] = ()
    extract_models: tuple[str, ...] = DEFAULT_EXTRACT_MODELS
    write_models: tuple[str, ...] = DEFAULT_WRITE_MODELS
    base_url: str = GROQ_BASE_URL
    timeout_s: float = Field(default=10.0, gt=0, description="one request")
    retries: int = Field(default=2, ge=0, description="extra tries of one key and model on 5xx or a timeout")
    backoff_s: float = Field(default=0.5, ge=0, description="first pause before a retry; doubles each time")
    backoff_max_s: float = Field(default=4.0, ge=0, description="no pause (Retry-After included) is longer")
    rounds: int = Field(default=2, ge=1, description="passes over the keys and models when all were rate limited")

    @field_validator("extract_models", "write_models")
    @classmethod
    def _some_models(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        models = tuple(m.strip() for m in v if m and m.strip())
        if not models:
            raise ValueError("at least one model is needed")
        return models

    @property
    def enabled(self) -> bool:
        return bool(self.api_keys)

    def keys(self) -> list[str]:
        return [k.get_secret_value() for k in self.api_keys]

    @classmethod
    def from_settings(cls, settings: Any = None, **overrides: Any) -> LLMSettings:
        """From a process's settings: its `groq_key` (AgentSettings has one), or a nested `llm`
        LLMSettings when the process carries one. `None` gives the no-key settings."""
        if isinstance(settings, LLMSettings):
            base = settings
        else:
            base = getattr(settings, "llm", None)
            if not isinstance(base, LLMSettings):
                base = cls()
            key = getattr(settings, "groq_key", None)
            if isinstance(key, str) and key.strip() and not base.api_keys:
                base = base.model_copy(update={"api_keys": tuple(SecretStr(k) for k in split_keys(key))})
        if overrides:
            if "api_keys" in overrides:
                overrides["api_keys"] = tuple(SecretStr(k) if isinstance(k, str) else k for k in overrides["api_keys"])
            base = cls.model_validate({**base.model_dump(), **overrides})
        return base
