"""The use cases: what the entry points (REST routes, the tools over REST and MCP, the agents'
handlers) do, each a function taking the one context object (`context.Deps`). A use case writes,
then returns the notifications it owes; the entry point announces them (`context.announce`).

May use: `relay_graph.lab`, `relay_graph.desk`, `relay_graph.memory`, `relay_graph.runtime`.
Its own Cypher (the console's and the operator's reads) is in `usecases.queries`."""
