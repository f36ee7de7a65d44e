"""Tickets: the desk's aggregate (`store`: tickets, handoffs, claims, the timeline, fixes and
procedures), its typed views (`models`), the resolver's working state (`work`), what the agents agree
on about stages and kinds (`status`), the Issue entity a problem points at (`issues`), and the
workflow: which stages and steps exist and what moves between them (`workflow`).

May use: `relay_graph.memory`, `relay_graph.runtime`, the desk's `queries`."""
