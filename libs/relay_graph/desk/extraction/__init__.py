"""Understanding a customer's message: the schema, the Extractor port, the no-LLM rules extractor,
time hints and templated replies. Pure logic, no I/O."""

from relay_graph.desk.extraction.port import ExtractionContext, Extractor
from relay_graph.desk.extraction.rules import RulesExtractor, extract
from relay_graph.desk.extraction.schema import (
    ExtractedFact,
    Extraction,
    Intent,
    IssueKind,
    ProblemReport,
    checked_fact,
    keep_valid_facts,
)
from relay_graph.desk.extraction.timehints import resolve_hint

__all__ = [
    "ExtractedFact", "Extraction", "ExtractionContext", "Extractor", "Intent", "IssueKind", "ProblemReport",
    "RulesExtractor", "checked_fact", "extract", "keep_valid_facts", "resolve_hint",
]
