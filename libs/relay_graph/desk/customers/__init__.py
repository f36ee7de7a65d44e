"""Customers: entities with a stable id whose names are facts (`store`), the regional desks of one
operator (`regional_desks`) and moving a customer's case between them (`case_move`).

May use: `relay_graph.memory`, `relay_graph.runtime`, the rest of the desk."""
