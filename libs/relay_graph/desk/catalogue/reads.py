"""Reading the catalogue from a tenant's graph: what replies and agents quote (prices in the
customer's currency with its tax, FAQs, playbooks) and the names the intake extractor matches."""

from __future__ import annotations

import re
from typing import Any

from relay_graph.runtime.db import GraphClient
from relay_graph.memory.entities import TOKEN, similarity
from relay_graph.runtime.errors import InvalidInput, NotFound
from relay_graph.desk.extraction.port import ExtractionContext
from relay_graph.desk.queries import catalogue as q
from relay_graph.memory.registry import clean_text
from relay_graph.runtime.tenancy import validate_tenant
from relay_graph.desk.catalogue.geo import fold
from relay_graph.desk.catalogue.models import ExtraOffer, FaqAnswer, PlanOffer, PlaybookStep, Price
from relay_graph.desk.catalogue.playbooks import ISSUE_KINDS

MAX_FAQ_RESULTS = 10
# Words that carry no meaning in a question; searching for them matches every FAQ.
_FAQ_STOPWORDS = frozenset({
    "a", "an", "the", "i", "me", "my", "we", "our", "you", "your", "is", "are", "am", "was", "be", "do", "does",
    "did", "can", "could", "should", "would", "will", "how", "what", "when", "where", "why", "which", "who",
    "to", "of", "in", "on", "at", "for", "with", "it", "its", "this", "that", "there", "and", "or", "but",
    "not", "no", "yes", "please", "get", "have", "has", "any", "some", "if", "so", "about", "from", "up",
})


def country_code(country: object) -> str:
    if not isinstance(country, str) or not re.fullmatch(r"[A-Za-z]{2}", country.strip()):
        raise InvalidInput("country must be an ISO 3166 alpha-2 code such as 'IN' or 'GB'", code="invalid_country")
    return country.strip().upper()


def _price(country: str, row: dict[str, Any]) -> Price:
    # The wording comes from the read itself (relay.money, udf.py), the same as pricing.display.
    edge = row["price"]
    return Price(country=country, currency=edge["currency"], amount=float(edge["amount"]),
                 tax_rate=float(edge["tax_rate"]), tax_amount=float(edge["tax_amount"]),
                 price_incl_tax=float(edge["price_incl_tax"]), period=edge["period"], display=row["display"],
                 display_incl_tax=row["display_incl_tax"])


async def _priced(client: GraphClient, tenant: str, query, country: object) -> tuple[str, list[dict]]:
    validate_tenant(tenant)
    cc = country_code(country)
    rows = await client.run(tenant, query, {"country": cc})
    if not rows and not await client.run(tenant, q.COUNTRY_EXISTS, {"country": cc}):
        raise NotFound(f"no catalogue for country {cc} in this tenant (not served, or its region is not seeded)",
                       code="country_not_served")
    return cc, rows


async def plans_for(client: GraphClient, tenant: str, country: str) -> list[PlanOffer]:
    """The plans sold in a country, slowest first, each with its local price and tax."""
    cc, rows = await _priced(client, tenant, q.PLANS_FOR, country)
    return [PlanOffer(offer_id=r["offer_id"], uid=r["uid"], name=r["name"], down_mbps=int(r["down_mbps"]),
                      up_mbps=int(r["up_mbps"]), description=r["description"], price=_price(cc, r))
            for r in rows]


async def addons_for(client: GraphClient, tenant: str, country: str) -> list[ExtraOffer]:
    cc, rows = await _priced(client, tenant, q.ADDONS_FOR, country)
    return [_extra(cc, r) for r in rows]


async def services_for(client: GraphClient, tenant: str, country: str) -> list[ExtraOffer]:
    cc, rows = await _priced(client, tenant, q.SERVICES_FOR, country)
    return [_extra(cc, r) for r in rows]


def _extra(cc: str, r: dict) -> ExtraOffer:
    return ExtraOffer(offer_id=r["offer_id"], kind=r["kind"], name=r["name"], description=r["description"],
                      price=_price(cc, r))


_WIFI = re.compile(r"\bwi[\s-]?fi\b", re.I)
_FAQ_CANDIDATES = 25


def _faq_words(text: str) -> list[str]:
    words = TOKEN.findall(_WIFI.sub("wifi", fold(text)))
    return list(dict.fromkeys(w for w in words if w not in _FAQ_STOPWORDS and len(w) >= 2))[:12]


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def faq_query(text: str) -> str | None:
    """A RediSearch query from free text: meaningful words only, OR-ed, long ones with one typo
    allowed. Only word characters survive, so no query syntax from the caller reaches the index."""
    words = _faq_words(text)
    if not words:
        return None
    return " | ".join(f"%{w}%" if len(w) >= 5 else w for w in words)


def _faq_rank(words: list[str], row: dict) -> float:
    """How well an FAQ answers: each query word found in the question or keywords counts 2, in
    the answer 1 (same stem, or one typo away for words of 5+ letters). The index finds the
    candidates; this orders them, because RediSearch's scores of OR-ed fuzzy terms do not."""
    def vocab(*texts: str) -> set[str]:
        return {_stem(w) for t in texts for w in TOKEN.findall(_WIFI.sub("wifi", fold(t or "")))}

    head, body = vocab(row["question"], row.get("keywords") or ""), vocab(row["answer"])

    def found(word: str, bag: set[str]) -> bool:
        stem = _stem(word)
        return stem in bag or (len(word) >= 5 and any(len(b) >= 4 and similarity(stem, b) >= 0.85 for b in bag))

    return float(sum(2 if found(w, head) else 1 if found(w, body) else 0 for w in words))


def faq_floor(q_text: str) -> float:
    """The least rank an FAQ needs to answer `q_text`: half the question's meaningful words found
    in the FAQ's question or keywords (and never less than one), so a long question that shares one
    word with an FAQ ("a plan for gamers with low ping" and "how do I change my plan?") is not
    answered by it."""
    return max(2.0, float(len(_faq_words(q_text))))


async def faq(client: GraphClient, tenant: str, q_text: str, *, limit: int = 3) -> list[FaqAnswer]:
    """The FAQs that best answer a question, best first (full-text search, typo tolerant)."""
    validate_tenant(tenant)
    text = clean_text(q_text, "question")
    if not 1 <= limit <= MAX_FAQ_RESULTS:
        raise InvalidInput(f"limit must be between 1 and {MAX_FAQ_RESULTS}")
    query = faq_query(text)
    if query is None:
        return []
    words = _faq_words(text)
    rows = await client.run(tenant, q.FAQ_SEARCH, {"q": query, "limit": _FAQ_CANDIDATES})
    ranked = sorted(((_faq_rank(words, r), float(r["score"]), r) for r in rows),
                    key=lambda x: (-x[0], -x[1], x[2]["faq_id"]))
    return [FaqAnswer(faq_id=r["faq_id"], topic=r["topic"], question=r["question"], answer=r["answer"], score=rank)
            for rank, _, r in ranked[:limit] if rank > 0]


def _issue_kind(issue_kind: object) -> str:
    if not isinstance(issue_kind, str) or issue_kind not in ISSUE_KINDS:
        raise InvalidInput(f"unknown issue kind {issue_kind!r}; known: {', '.join(ISSUE_KINDS)}",
                           code="unknown_issue_kind")
    return issue_kind


async def playbook_steps(client: GraphClient, tenant: str, issue_kind: str) -> list[PlaybookStep]:
    validate_tenant(tenant)
    kind = _issue_kind(issue_kind)
    rows = await client.run(tenant, q.PLAYBOOK_STEPS, {"issue_kind": kind})
    if not rows:
        raise NotFound(f"no playbook for {kind} in this tenant (catalogue not seeded)", code="playbook_not_found")
    return [PlaybookStep(order=int(r["order"]), action=r["action"], instruction=r["instruction"]) for r in rows]


async def extraction_context(client: GraphClient, tenant: str) -> ExtractionContext:
    """The served cities, plans and router models of this tenant's catalogue, for the extractor."""
    validate_tenant(tenant)
    rows = await client.run(tenant, q.EXTRACTION_NAMES)
    names: dict[str, list[str]] = {"city": [], "plan": [], "router": []}
    for r in rows:
        if r["name"]:
            names[r["kind"]].append(r["name"])
    return ExtractionContext(cities=tuple(sorted(set(names["city"]))), plans=tuple(sorted(set(names["plan"]))),
                             routers=tuple(sorted(set(names["router"]))))


__all__ = [
    "addons_for",
    "country_code",
    "extraction_context",
    "faq",
    "faq_query",
    "playbook_steps",
    "plans_for",
    "services_for",
]
