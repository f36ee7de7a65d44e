"""The memory engine's named, parameterised statements, one module per aggregate."""

from relay_graph.runtime.embeddings import DIMENSION
from relay_graph.runtime.queries.schema import Indexes, declare

# The indexes the engine's statements start from.
declare("relay_graph.memory", Indexes(
    range=(
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
        ("Predicate", "name"),  # a tenant's own predicates (predicates.py)
        ("Vocabulary", "key"),
    ),
    fulltext=(
        ("Entity", "name"),
        ("Episode", "text"),
    ),
    # Fact vectors live on FactText nodes (see queries/fact_embeddings.py for why not on Fact) and
    # carry no index: recall reaches them through the graph and measures the few it reached
    # (vec.cosineDistance), so an index would only hold a second copy of every vector and its
    # reservation in every tenant.
    vector=(("Episode", "embedding", DIMENSION),),
))
