"""Relay: shared, time-aware graph memory for teams of agents, on FalkorDB, and the support desk
built on it to prove it. Packages by role, each allowed to use only those listed before it:

- `runtime`: database access (`db`, the named-statement type, the tenant graphs' schema), Redis
  Streams and delivery, the outbox, embeddings, the embedded FalkorDB, the agents' process plumbing.
- `memory`: the memory engine any agent team uses: facts on two clocks, episodes, recall, names,
  the predicate registry. Nothing of the internet provider.
- `desk`: the support desk's domain on the engine: tickets, the
  network, the catalogue, the conversation, extraction and reply wording.
- `lab`: the simulated world and the fault lab (its hidden truth) on the desk's network.
- `usecases`: what the entry points do, one function a use case, sharing one context object; a use
  case writes, then returns the notifications it owes, which the entry point announces.
- `tools`: the typed tool catalogue (REST, MCP, the agents), an entry point over the use cases.

Cypher lives only in each package's `queries/` as named, parameterised statements.
`tests/test_architecture.py` holds these rules."""
