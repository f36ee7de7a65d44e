"""Indexes of a tenant graph, created on first use. Creating an index that exists is an error
in FalkorDB, so `ensure_schema` reads `db.indexes()` first."""

from __future__ import annotations

from relay_graph.runtime.embeddings import DIMENSION

# (label, property) range indexes on nodes
RANGE_INDEXES: tuple[tuple[str, str], ...] = (
    ("Entity", "uid"),
    ("Entity", "name_key"),
    ("Fact", "fact_id"),
    ("Fact", "slot"),
    ("Episode", "episode_id"),
    ("Episode", "text_key"),
    ("Session", "session_id"),
    ("Session", "last_at_ms"),  # recall: "yesterday" is relative to the newest turn
    ("Episode", "at_ms"),  # recall: the turns of a time the question names ("in May 2023")
    ("Episode", "said_from_ms"),  # recall: the turns that say a time ("last Saturday"), and which
    ("Speaker", "key"),  # recall: a speaker the question names
    ("Agent", "name"),
    ("Conflict", "conflict_id"),
    ("Slot", "key"),
    ("FactText", "text"),  # a claim's text, shared by every fact making it (fact_embeddings)
    # the desk (tickets module)
    ("Ticket", "ticket_id"),
    ("Outbox", "notification_id"),  # announcements kept until published (outbox.py)
    ("Procedure", "procedure_id"),
    ("Procedure", "issue_kind"),
    ("ProcStep", "procedure_id"),
    ("TechVisit", "visit_id"),
    ("Promise", "promise_id"),  # promises the desk made on a ticket (queries/conversation.py)
    ("Technician", "name"),
    # the access network (network module)
    ("NetNode", "node_id"),
    ("Outage", "node_id"),
    ("Outage", "outage_id"),
    # the provider's catalogue (catalogue package; queries/catalogue.py)
    ("Region", "code"),
    ("Country", "code"),
    ("Area", "uid"),
    ("Offer", "offer_id"),
    ("Faq", "faq_id"),
    ("Playbook", "issue_kind"),
    ("PlaybookStep", "step_id"),
    ("PlaybookStep", "issue_kind"),
    ("CatalogueSeed", "region"),
)
FULLTEXT_INDEXES: tuple[tuple[str, str], ...] = (
    ("Entity", "name"),
    ("Episode", "text"),
    ("Faq", "question"),  # one full-text index over these fields (catalogue FAQ search)
    ("Faq", "answer"),
    ("Faq", "keywords"),
)
VECTOR_INDEXES: tuple[tuple[str, str, int], ...] = (
    ("Episode", "embedding", DIMENSION),
    # fact vectors live on FactText nodes (see queries/fact_embeddings.py for why not on Fact)
    ("FactText", "embedding", DIMENSION),
)

LIST_INDEXES = "CALL db.indexes() YIELD label, properties, types RETURN label, properties, types"
INDEX_STATUS = "CALL db.indexes() YIELD status RETURN status"


def range_index(label: str, prop: str) -> str:
    return f"CREATE INDEX FOR (n:{label}) ON (n.{prop})"


def vector_index(label: str, prop: str, dim: int) -> str:
    return (
        f"CREATE VECTOR INDEX FOR (n:{label}) ON (n.{prop}) "
        f"OPTIONS {{dimension:{dim}, similarityFunction:'cosine'}}"
    )


FULLTEXT_INDEX = "CALL db.idx.fulltext.createNodeIndex($label, $prop)"
