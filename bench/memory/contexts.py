"""The two systems' contexts for one question: a list of dated lines, (ISO time or None, text).

Relay answers through its tool catalogue over HTTP (`POST /v1/tenants/{t}/tools/{name}`), one
fixed tool plan per kind of question (what an agent would call), each answer rendered as dated
lines. Times stay out of the line text: they are the line's date. Every call addresses the
customer by the id Relay gave them (the loader's name -> id map), as a desk agent that knows who it
is serving would; a name the desk never met has no id, so Relay is asked `find_customers` for it
and only a customer of exactly that name is read (none: no lines). A line about the customer names
them as the question does (the id is the address, not what a reader is shown).

The vector store holds the same conversation turns the loader played (customers' chat turns and
agents' notes), each embedded once with the same Embedder Relay uses; a question is embedded, the
turns about its customer (filtered by their id; a name nobody met has none) are ranked by cosine
similarity, the top 10 are kept and dated, newest first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
import numpy as np

from .questions import Question

Line = tuple[str | None, str]
TOP_K = 10
READER_AGENT = "bench_reader"


def newest_first(lines: list[Line]) -> list[Line]:
    dated = sorted((ln for ln in lines if ln[0]), key=lambda ln: ln[0], reverse=True)
    return dated + [ln for ln in lines if not ln[0]]


# ---------------------------------------------------------------- Relay


class RelayTools:
    def __init__(self, http: httpx.AsyncClient, tenant: str, headers: dict[str, str]):
        self.http, self.headers = http, headers
        self.base = f"/v1/tenants/{quote(tenant, safe='')}/tools"
        self.calls = 0
        self.errors: list[str] = []

    async def call(self, name: str, /, **args: Any) -> dict[str, Any] | None:
        """The tool's `data`, or None (unknown name, nothing found, or an error, kept in `errors`)."""
        self.calls += 1
        r = await self.http.post(f"{self.base}/{name}", json=args, params={"agent": READER_AGENT}, headers=self.headers,
                                 timeout=30.0)
        if r.status_code != 200:
            self.errors.append(f"{name} {args}: {r.status_code} {r.text[:200]}")
            return None
        body = r.json()
        return body.get("data") if body.get("shape") != "unknown_name" else None

    async def _facts(self, subject: str, predicate: str, **kw: Any) -> list[dict]:
        data = await self.call("facts_at", subject=subject, predicate=predicate, **kw)
        return (data or {}).get("facts", [])

    async def find(self, name: str) -> str | None:
        """The id of the one customer called exactly `name` (a name spelt alike, or two of them: None)."""
        data = await self.call("find_customers", name=name) or {}
        found = data.get("customers", [])
        if data.get("matched") or data.get("ambiguous") or len(found) != 1:
            return None
        return found[0]["id"]

    async def context(self, q: Question, customer: str | None, as_of: str | None) -> tuple[list[Line], list[str]]:
        """The lines, and the tools called; `customer` is the asked person's id (None: not known)."""
        if customer is None:
            customer = await self.find(q.customer)
            if customer is None:
                return [], ["find_customers"]
            lines, called = await self._context(q, customer, as_of)
            return lines, ["find_customers", *called]
        return await self._context(q, customer, as_of)

    async def _context(self, q: Question, cid: str, as_of: str | None) -> tuple[list[Line], list[str]]:
        kind, c = q.answer_kind, q.customer
        lines: list[Line] = []
        if kind in ("city", "plan", "router", "devices", "phone", "email"):
            predicate = {"city": "lives_in", "plan": "on_plan", "router": "has_router", "devices": "owns_device",
                         "phone": "phone", "email": "email"}[kind]
            extra: dict[str, Any] = {}
            if as_of is not None and q.clock:
                extra = {"as_of": as_of, "clock": q.clock}
            for f in await self._facts(cid, predicate, **extra):
                date = f.get("recorded_at") if q.clock == "belief" else f.get("valid_from")
                lines.append((date, f"{c} {f['predicate']} = {f['object']} (filed by {f['asserted_by']})"))
            return newest_first(lines), ["facts_at"]
        if kind == "router_claims":
            data = await self.call("claims", subject=cid, predicate="has_router") or {}
            for cl in data.get("claims", []):
                lines.append((cl.get("recorded_at"),
                              f"{c} has_router = {cl['object']} (claimed by {cl['asserted_by']})"))
            return newest_first(lines), ["claims"]
        if kind == "outage_city":
            data = await self.call("recall_customer", customer=cid) or {}
            for f in data.get("facts", []):
                lines.append((f.get("valid_from"), f"{c} {f['predicate']} = {f['object']}"))
            for t in data.get("open_tickets", []):
                lines.append((t.get("updated_at"), f"ticket {t['id']}: {t['issue']}, stage {t['stage']}"))
            for o in data.get("open_outages", []):
                lines.append((o.get("opened_at"), f"open outage {o['outage_id']} on {o['node_name']} "
                                                  f"({o['node_kind']} {o['node_id']}): {o.get('cause', '')}"))
            return newest_first(lines), ["recall_customer"]
        if kind == "issues":
            data = await self.call("tickets", customer=cid, limit=200) or {}
            for t in data.get("tickets", []):
                lines.append((t.get("opened_at"), f"ticket {t['id']}: {c}, {t['issue']}, stage {t['stage']}"))
            return newest_first(lines), ["tickets"]
        if kind == "fix":
            data = await self.call("recall", q=q.text, subject=cid, k=TOP_K) or {}
            for i in data.get("items", []):
                lines.append((i.get("at"), f"{i['speaker']}: {i['text']}"))
            fixes = await self.call("past_fixes", issue_kind=q.issue) or {}
            for p in fixes.get("procedures", []):
                lines.append((None, f"procedure for {fixes.get('issue_kind')}: {' > '.join(p['steps'])} "
                                    f"({p['successes']} fixed, {p['failures']} failed)"))
            return newest_first(lines), ["recall", "past_fixes"]
        raise ValueError(f"no tool plan for {kind!r}")


# ---------------------------------------------------------------- the vector store


@dataclass
class VectorStore:
    """Turns embedded once; a search is filtered to the customer, top k by cosine, newest first."""

    turns: list[dict[str, Any]]
    vectors: np.ndarray

    @classmethod
    def build(cls, turns: list[dict[str, Any]], embedder) -> VectorStore:
        texts = [f"{t['speaker']}: {t['text']}" for t in turns]
        vectors = np.asarray(embedder.embed(texts), dtype=np.float32) if texts else np.zeros((0, 384), np.float32)
        return cls(list(turns), vectors)

    def context(self, customer: str | None, query_vector: list[float], k: int = TOP_K) -> list[Line]:
        """`customer`: the asked person's id (None, a name nobody met: no turns)."""
        idx = [i for i, t in enumerate(self.turns) if customer is not None and t["customer"] == customer]
        if not idx:
            return []
        scores = self.vectors[idx] @ np.asarray(query_vector, dtype=np.float32)
        order = sorted(range(len(idx)), key=lambda j: (-float(scores[j]), idx[j]))[:k]
        lines = [(self.turns[idx[j]]["at"], f"{self.turns[idx[j]]['speaker']}: {self.turns[idx[j]]['text']}")
                 for j in order]
        return newest_first(lines)
