"""Reading a /metrics answer in tests: prometheus_client's own parser (a text it cannot parse fails
the test), then samples by name and labels."""

from __future__ import annotations

import re

from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample


def parse(text: str) -> list[Sample]:
    return [s for family in text_string_to_metric_families(text) for s in family.samples]


def value(samples: list[Sample], name: str, **labels: str) -> float | None:
    """The sample `name` whose labels include `labels` (summed when several match), None if none does."""
    found = [s.value for s in samples if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())]
    return sum(found) if found else None


def names(samples: list[Sample]) -> set[str]:
    return {s.name for s in samples}


def excerpt(text: str, *prefixes: str, limit: int = 60) -> str:
    """The lines of `text` (no HELP/TYPE, no histogram buckets) that start with one of `prefixes`."""
    lines = [line for line in text.splitlines()
             if line.startswith(prefixes) and "_bucket{" not in line]
    return "\n".join(lines[:limit])


def series(expr: str) -> set[str]:
    """The series a PromQL expression reads: its identifiers that are not functions, label lists
    (`by (...)`), label matchers, ranges or keywords."""
    bare = re.sub(r"\{[^}]*\}|\[[^\]]*\]|\b(?:by|without)\s*\([^)]*\)", " ", expr)
    words = re.findall(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()", bare)
    return {w for w in words if w not in {"by", "without", "on", "ignoring", "group_left", "group_right",
                                          "and", "or", "unless", "offset", "bool", "e"}}
