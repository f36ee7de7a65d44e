"""The use cases: the one door for every write an entry point makes (REST routes, the tools over REST
and MCP, the agents' handlers), and the reads they share. Each is a function taking the call
(`context.Call`, made from the process's `context.Deps`): it writes through the desk, the lab and
the engine, records on the call the notifications it owes (`Call.owe`) and never announces. The
call's owner flushes them once the work is done (`Call.flush`): the gateway's route dependency, an
agent's unit of work (`Deps.work`), the tool catalogue's `call_tool`; through the outbox, so a
write and its announcement never part. `chat.await_reply` is the one use case that flushes its own
call: the customer's turn must be announced before the reply to it can be awaited.

One module a subject: `facts` (write, retire, settle), `episodes`, `tasks`, `predicates`;
`tickets` (the ticket workflow's steps, claims, fixes, visits, escalations, the customer's word),
`ticket_opening` (intake opening and handing off tickets, linking outages), `network` (outages, node
status), `equipment` (the resolver's instruments: measuring and acting through the lab);
`customers` (creating, time zone, homes on the network, moving a case), `world` (a tenant's region
and desk), `faults` (the lab's injected faults); `chat` (a customer's turn in), `replies` (the
agents' replies); `console`, `console_focus`, `console_groups`, `isolation`, `compare`, `network_map`,
`simulator_control` (the staff console), `judge_story` (Judge mode's story), `provenance` (the
reads behind the tools' explanations) and `operations` (the operator's acts on whole graphs:
snapshots, reset, delete, move; they take the operator's graph client, as the CLI does, since they
run as another FalkorDB user and across databases).

May use: `relay_graph.lab`, `relay_graph.desk`, `relay_graph.memory`, `relay_graph.runtime`.
Its own Cypher (the console's and the operator's reads) is in `usecases.queries`."""
