"""The memory engine: what any team of agents uses, and nothing of the internet provider.

Facts on two clocks (`facts`, planned purely by `fact_planning`), episodes and their vectors
(`episodes`, `fact_embeddings`), recall (`recall`), reading by name (`names`), the predicate
registry (`registry`: the public contract's predicates, from which the statements are built),
the shared input types (`inputs`, `models`), retention and the entity graph's communities.
`facade.Memory` wires them to one client and embedder.

May use: `relay_graph.runtime`. Its Cypher is in `memory.queries`."""
