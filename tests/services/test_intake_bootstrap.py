"""Which extractor the intake agent runs: rules without a key, Groq then rules with one."""

from relay_graph.desk.extraction import RulesExtractor
from relay_graph.desk.extraction.fallback import FallbackExtractor
from relay_graph.desk.extraction.groq import GroqExtractor
from services.intake.bootstrap import make_extractor
from services.intake.settings import IntakeSettings


def test_no_key_means_rules_only(monkeypatch):
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    assert isinstance(make_extractor(IntakeSettings()), RulesExtractor)


def test_key_means_groq_first_and_rules_last(monkeypatch):
    monkeypatch.setenv("GROQ_API_KEY", "k1,k2")
    extractor = make_extractor(IntakeSettings())
    assert isinstance(extractor, FallbackExtractor)
    chain = extractor.extractors if hasattr(extractor, "extractors") else extractor._extractors
    assert isinstance(chain[0], GroqExtractor)
    assert isinstance(chain[-1], RulesExtractor)
