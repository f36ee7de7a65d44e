from __future__ import annotations

import re


# Every path of docs/contract.md's v1 contract that this part of the gateway serves (health, tenants, memory).
CONTRACT = {
    ("get", "/healthz"), ("get", "/readyz"), ("post", "/v1/tenants"),
    ("post", "/v1/tenants/{t}/facts"), ("post", "/v1/tenants/{t}/facts/retire"), ("get", "/v1/tenants/{t}/facts"),
    ("get", "/v1/tenants/{t}/claims"), ("post", "/v1/tenants/{t}/conflicts/{id}/settle"),
    ("post", "/v1/tenants/{t}/episodes"), ("get", "/v1/tenants/{t}/recall"),
}


def _shape(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "{}", path)


async def test_openapi_lists_every_contract_path(client):
    r = await client.get("/openapi.json")
    assert r.status_code == 200
    doc = r.json()
    assert doc["info"]["title"] == "Relay"
    assert doc["info"]["version"] == "1"
    served = {(m, _shape(p)) for p, ops in doc["paths"].items() for m in ops}
    missing = {(m, p) for m, p in CONTRACT if (m, _shape(p)) not in served}
    assert not missing


async def test_openapi_documents_bearer_auth_and_error_shape(client):
    doc = (await client.get("/openapi.json")).json()
    assert any(s.get("scheme") == "bearer" for s in doc["components"]["securitySchemes"].values())
    op = doc["paths"]["/v1/tenants/{t}/facts"]["post"]
    assert op["responses"]["201"]
    assert op["responses"]["401"]["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorBody")
    assert op["requestBody"]


async def test_docs_page(client):
    r = await client.get("/docs")
    assert r.status_code == 200
    assert "swagger" in r.text.lower()


def _schema_keys(node, path=""):
    """(where, key) of every key of every schema object in the document."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield path, k
            yield from _schema_keys(v, f"{path}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _schema_keys(v, f"{path}/{i}")


async def test_bounds_are_json_schema_keywords(client):
    # pydantic writes a bound it cannot push into the type as its own `ge`/`le`: no JSON Schema tool
    # (nor Schemathesis) reads those, so clients would be told there is no bound.
    doc = (await client.get("/openapi.json")).json()
    wrong = [(where, k) for where, k in _schema_keys(doc)
             if k in ("ge", "le", "gt", "lt") and not where.endswith("/properties")]  # not a field named so
    assert not wrong, wrong[:10]
    depth = doc["components"]["schemas"]["AffectedByInput"]["properties"]["depth"]["anyOf"][0]
    assert (depth["minimum"], depth["maximum"]) == (0, 16)


async def test_the_facts_read_names_the_predicates_it_leaves_to_be_asked_for(client):
    from relay_graph.memory import turn_facts  # noqa: F401 - registers the turn rules' predicates
    from relay_graph.memory.registry import TURN_PREDICATES
    from relay_graph.tools.memory_tools import FactsAtInput

    said = (await client.get("/openapi.json")).json()["paths"]["/v1/tenants/{t}/facts"]["get"]["description"]
    listed = ", ".join(sorted(TURN_PREDICATES))
    assert TURN_PREDICATES and f"({listed})" in said
    assert f"({listed})" in FactsAtInput.model_fields["predicate"].description
