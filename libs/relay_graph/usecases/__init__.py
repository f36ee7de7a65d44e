"""The use cases: what the entry points (REST routes, the tools over REST and MCP, the agents'
handlers) do, each a function taking the per-call context (`context.Call`, made from the
process's `context.Deps`). A use case writes, then returns the notifications it owes; the entry
point announces them (`Call.announce` or `notify`, `context.announce` for an agent).

One module a subject: `facts` (write, retire, settle), `tickets` (confirm a fix, hand off), `chat`
(a customer's turn in), `console` and `operations` (the staff console's reads, the operator's
acts), `provenance` (the reads behind the tools' explanations), `replies` (the agents' replies).

May use: `relay_graph.lab`, `relay_graph.desk`, `relay_graph.memory`, `relay_graph.runtime`.
Its own Cypher (the console's and the operator's reads) is in `usecases.queries`."""
