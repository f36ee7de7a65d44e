"""Understanding a customer's message: the schema, the Extractor port, the no-LLM rules extractor,
time hints and templated replies. Pure logic, no I/O."""

from .port import ExtractionContext, Extractor
from .rules import RulesExtractor, extract
from .schema import ExtractedFact, Extraction, Intent, IssueKind, ProblemReport, checked_fact, keep_valid_facts
from .timehints import resolve_hint

__all__ = [
    "ExtractedFact", "Extraction", "ExtractionContext", "Extractor", "Intent", "IssueKind", "ProblemReport",
    "RulesExtractor", "checked_fact", "extract", "keep_valid_facts", "resolve_hint",
]
