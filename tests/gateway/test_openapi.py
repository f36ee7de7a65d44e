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
