"""docs/api.md is what `python -m services.gateway.apidoc` prints from the gateway's OpenAPI."""

from __future__ import annotations

from pathlib import Path

from services.gateway import apidoc

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_the_committed_api_reference_is_the_generated_one():
    expected = apidoc.render(apidoc.openapi())
    assert (DOCS / "api.md").read_text() == expected, (
        "docs/api.md is stale: run `python -m services.gateway.apidoc > docs/api.md`")


def test_the_reference_lists_every_operation_and_names_the_input_rules():
    doc = apidoc.openapi()
    text = (DOCS / "api.md").read_text()
    for path, ops in doc["paths"].items():
        for method in ops:
            assert f"### `{method.upper()} {path}`" in text
    assert "string (identifier, 1-128 chars)" in text and "string (name, 1-200 chars)" in text
    assert (DOCS / "contract.md").exists()
