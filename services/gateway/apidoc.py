"""The API reference, generated from the gateway's own OpenAPI document:

    python -m services.gateway.apidoc > docs/api.md

tests/gateway/test_apidoc.py checks that the committed docs/api.md is what this prints, so the
reference cannot drift from the code. The conventions that no schema states (auth, errors, how
names and ids are written) are the hand-written docs/contract.md."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from relay_graph.memory.inputs import IDENTIFIER_PATTERN, NAME_PATTERN, TEXT_PATTERN, TIME_PATTERN

# The shared input rules by name (relay_graph.memory.inputs): their patterns are long, their meaning short.
RULES = {
    IDENTIFIER_PATTERN: "identifier",
    NAME_PATTERN: "name",
    TEXT_PATTERN: "text",
    TIME_PATTERN: "time",
}

HEADER = """# Relay HTTP API reference

Generated from the gateway's OpenAPI document by `python -m services.gateway.apidoc > docs/api.md`;
do not edit by hand. The conventions (auth, errors, names and ids) are in [contract.md](contract.md);
a running gateway serves the same document at `/openapi.json`, `/docs` and `/redoc`.

Input rules (`relay_graph.memory.inputs`), named in the tables below:

- **identifier**: 1-128 printable ASCII characters, spaces only inside; kept exactly.
- **text**: any Unicode but NUL, with something besides spaces; kept exactly as written (line
  breaks, tabs, emoji joiners, right-to-left marks).
- **name**: no control or format characters but the joiners ZWJ and ZWNJ, something besides
  spaces; addressed by its normal form (docs/desk.md, "Names are normalised once").
- **time**: ISO 8601 with an offset, in the years 1900 to 2199.
"""


def anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def type_of(schema: dict[str, Any]) -> str:
    """A short reading of a JSON schema: `string (name, ≤200)`, `[FactView]`, `integer 1..100`."""
    if "$ref" in schema:
        return f"[{_ref_name(schema['$ref'])}](#{anchor(_ref_name(schema['$ref']))})"
    for key in ("anyOf", "oneOf"):
        if key in schema:
            parts = [type_of(s) for s in schema[key] if s.get("type") != "null"]
            nullable = any(s.get("type") == "null" for s in schema[key])
            return " or ".join(parts) + (" or null" if nullable else "")
    if "enum" in schema:
        return " ｜ ".join(f"`{v}`" for v in schema["enum"])
    if "const" in schema:
        return f"`{schema['const']}`"
    kind = schema.get("type", "any")
    if kind == "array":
        out = f"list of {type_of(schema.get('items', {}))}"
        if "maxItems" in schema or "minItems" in schema:
            out += f" ({schema.get('minItems', 0)}..{schema.get('maxItems', '')})"
        return out
    if kind == "object" and "additionalProperties" in schema and isinstance(schema["additionalProperties"], dict):
        return f"map of {type_of(schema['additionalProperties'])}"
    notes = []
    if "pattern" in schema:
        notes.append(RULES.get(schema["pattern"], f"`{schema['pattern']}`"))
    if "format" in schema:
        notes.append(schema["format"])
    if "minLength" in schema or "maxLength" in schema:
        notes.append(f"{schema.get('minLength', 0)}-{schema.get('maxLength', '…')} chars")
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    if low is not None or high is not None:
        notes.append(f"{'' if low is None else low}..{'' if high is None else high}")
    return kind + (f" ({', '.join(notes)})" if notes else "")


def _cell(text: Any) -> str:
    return " ".join(str(text or "").split()).replace("|", "\\|")


def _fields(schema: dict[str, Any]) -> list[str]:
    props = schema.get("properties", {})
    if not props:
        return []
    required = set(schema.get("required", []))
    rows = ["| field | type | required | description |", "|---|---|---|---|"]
    for name, prop in props.items():
        default = f" Default `{json.dumps(prop['default'])}`." if "default" in prop and prop["default"] is not None else ""
        rows.append(f"| `{name}` | {_cell(type_of(prop))} | {'yes' if name in required else ''} | "
                    f"{_cell(prop.get('description', ''))}{default} |")
    return rows


def operation(method: str, path: str, op: dict[str, Any]) -> list[str]:
    out = [f"### `{method.upper()} {path}`", ""]
    if op.get("summary"):
        out += [op["summary"], ""]
    if op.get("description"):
        out += [" ".join(op["description"].split()), ""]
    params = op.get("parameters", [])
    if params:
        out += ["| parameter | in | type | required | description |", "|---|---|---|---|---|"]
        for p in params:
            out.append(f"| `{p['name']}` | {p['in']} | {_cell(type_of(p.get('schema', {})))} | "
                       f"{'yes' if p.get('required') else ''} | {_cell(p.get('description', ''))} |")
        out.append("")
    body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    if body:
        out += [f"Body: {type_of(body)}", ""]
    answers, errors = [], []
    for status, answer in sorted(op.get("responses", {}).items()):
        schema = answer.get("content", {}).get("application/json", {}).get("schema")
        if schema and schema.get("$ref", "").endswith("/ErrorBody"):
            errors.append(status)
        else:
            answers.append(f"{status} {type_of(schema) if schema else ''}".strip())
    out += ["Answers: " + "; ".join(answers) + (f"; errors ([ErrorBody](#errorbody)): {', '.join(errors)}"
                                                 if errors else ""), ""]
    return out


def render(doc: dict[str, Any]) -> str:
    out = [HEADER]
    by_tag: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            by_tag.setdefault((op.get("tags") or ["other"])[0], []).append((method, path, op))
    # a contents list: the page is long, and GitHub renders each `## tag` with the anchor `#tag`
    out += ["Contents:", ""] + [f"- [{tag}](#{anchor(tag)})" for tag in by_tag] + ["- [Schemas](#schemas)", ""]
    for tag, ops in by_tag.items():
        out += [f"## {tag}", ""]
        for method, path, op in ops:
            out += operation(method, path, op)
    out += ["## Schemas", ""]
    for name, schema in sorted(doc.get("components", {}).get("schemas", {}).items()):
        out += [f"### {name}", ""]
        if schema.get("description"):
            out += [" ".join(schema["description"].split()), ""]
        rows = _fields(schema)
        out += (rows + [""]) if rows else [f"{type_of(schema)}", ""]
    return "\n".join(out).rstrip() + "\n"


def openapi() -> dict[str, Any]:
    from .app import create_app
    from .settings import GatewaySettings

    # The document does not depend on the settings' values; nothing is connected to build it.
    return create_app(GatewaySettings(admin_key=None)).openapi()


def main() -> None:
    sys.stdout.write(render(openapi()))


if __name__ == "__main__":
    main()
