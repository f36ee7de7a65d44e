"""LLM settings: keys from the process's settings, several keys in one variable, none by default."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from relay_graph.desk.llm import DEFAULT_EXTRACT_MODELS, LLMSettings
from relay_graph.desk.llm.settings import split_keys


def test_split_keys() -> None:
    assert split_keys("k1") == ["k1"]
    assert split_keys(" k1, k2 ;k3  k1 ") == ["k1", "k2", "k3"]
    assert split_keys("") == [] and split_keys(None) == []


def test_no_settings_means_no_key() -> None:
    s = LLMSettings.from_settings(None)
    assert not s.enabled and s.keys() == [] and s.extract_models == DEFAULT_EXTRACT_MODELS


def test_keys_come_from_the_agent_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    from relay_graph.runtime.agents.settings import AgentSettings

    monkeypatch.delenv("RELAY_GROQ_API_KEY", raising=False)
    monkeypatch.setenv("GROQ_API_KEY", "gsk_a,gsk_b")
    s = LLMSettings.from_settings(AgentSettings())
    assert s.enabled and s.keys() == ["gsk_a", "gsk_b"]
    assert "gsk_a" not in repr(s) and "gsk_a" not in str(s.model_dump())

    monkeypatch.delenv("GROQ_API_KEY")
    assert not LLMSettings.from_settings(AgentSettings()).enabled


def test_overrides_and_validation() -> None:
    s = LLMSettings.from_settings(None, api_keys=["k"], extract_models=["m1"], retries=0)
    assert s.keys() == ["k"] and s.extract_models == ("m1",) and s.retries == 0
    assert LLMSettings.from_settings(s) is s
    with pytest.raises(ValidationError):
        LLMSettings(extract_models=())
    with pytest.raises(ValidationError):
        LLMSettings(timeout_s=0)
    with pytest.raises(ValidationError):
        LLMSettings(retries=-1)
