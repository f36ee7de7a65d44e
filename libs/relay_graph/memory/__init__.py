"""The memory engine: what any team of agents uses, and nothing of the internet provider.

Facts on two clocks (`facts`, planned purely by `fact_planning`), episodes and their vectors
(`episodes`, `fact_embeddings`), recall (`recall`), reading by name (`names`), the predicate
registry (`registry`: the mechanism its user declares a vocabulary with; the statements are built
from what is registered, when used) and a tenant's own predicates beside it (`predicates`, kept in
its graph), the shared input types (`inputs`, `models`), retention and
the entity graph's communities.
`facade.Memory` wires them to one client and embedder.

May use: `relay_graph.runtime`. Its Cypher is in `memory.queries`."""

# Importing the engine declares the indexes its statements start from (memory.queries).
from relay_graph.memory import queries  # noqa: E402,F401
# ... and the one-off move of names keyed by an older name_key (name_migration.py).
from relay_graph.memory import name_migration  # noqa: E402,F401
# ... then the one-off merge of the entities writes by a customer's name made beside them (name_twins.py).
from relay_graph.memory import name_twins  # noqa: E402,F401
