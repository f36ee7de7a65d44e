"""Cypher of fact vectors: `(:Fact)-[:PHRASED_AS]->(:FactText {text, embedding})`.

The vector lives on its own node, not on the Fact, for two reasons:
- FalkorDB 4.16 keeps a stale copy of a node in a vector index whenever a node that already has a
  vector gets a label or property changed, and facts change both (Current -> Superseded, a
  corroboration count); vector queries then return fewer than k rows. A FactText never changes.
- The text is the claim without its subject ("lives in pune"): the subject is the graph's job (ABOUT
  edge, entity resolution), the vector's job is the meaning of the claim. So one node and one vector
  serve every fact that makes the same claim, found by its text (indexed; claims are short) before
  anything is embedded, whichever process embedded it.
"""

from __future__ import annotations

from relay_graph.runtime.queries import Query

LABEL = "FactText"

# The claim's text, built here only: "lives_in" + "Pune" -> "lives in Pune", or the predicate's fixed
# wording ($fixed, registry.fixed_claims: "phone" -> "phone number"). fact_embeddings.claim_text is its
# Python twin, for callers that have no fact yet.
_CLAIM = "coalesce($fixed[f.predicate], replace(f.predicate, '_', ' ') + ' ' + f.object_name)"

# Facts of the batch not phrased yet, their claim, and whether that claim has a vector already.
UNPHRASED = Query(
    "facts_unphrased",
    "UNWIND $ids AS id "
    "MATCH (f:Fact {fact_id: id}) "
    "OPTIONAL MATCH (f)-[p:PHRASED_AS]->(:FactText) "
    "WITH f, p WHERE p IS NULL "
    f"WITH f, {_CLAIM} AS text "
    "OPTIONAL MATCH (t:FactText {text: text}) "
    "RETURN f.fact_id AS fact_id, text, t IS NOT NULL AS known",
    read_only=True,
)

# One statement: new claims with their vectors (set once, at creation), then the links.
WRITE = Query(
    "fact_texts_write",
    "UNWIND $texts AS x "
    "MERGE (t:FactText {text: x.text}) "
    "  ON CREATE SET t.embedding = vecf32(x.vec) "
    "WITH count(*) AS _ "
    "UNWIND $links AS l "
    "MATCH (f:Fact {fact_id: l.id}) "
    "MATCH (t:FactText {text: l.text}) "
    "MERGE (f)-[:PHRASED_AS]->(t) "
    "RETURN count(*) AS linked",
)
