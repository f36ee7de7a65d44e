"""The desk's named, parameterised statements, one module per aggregate."""

from relay_graph.runtime.queries.schema import Indexes, declare

# The indexes the desk's statements start from (declared with them: any desk statement loads this).
declare("relay_graph.desk", Indexes(range=(
    # tickets (queries/tickets.py)
    ("Ticket", "ticket_id"),
    ("Procedure", "procedure_id"),
    ("Procedure", "issue_kind"),
    ("ProcStep", "procedure_id"),
    ("TechVisit", "visit_id"),
    ("Technician", "name"),
    ("Promise", "promise_id"),  # promises the desk made on a ticket (queries/conversation.py)
    # the access network (queries/network.py)
    ("NetNode", "node_id"),
    ("Outage", "node_id"),
    ("Outage", "outage_id"),
)))
# The provider's catalogue (catalogue package; queries/catalogue.py).
declare("relay_graph.desk.catalogue", Indexes(
    range=(
        ("Region", "code"),
        ("Country", "code"),
        ("Area", "uid"),
        ("Offer", "offer_id"),
        ("Faq", "faq_id"),
        ("Playbook", "issue_kind"),
        ("PlaybookStep", "step_id"),
        ("PlaybookStep", "issue_kind"),
        ("CatalogueSeed", "region"),
    ),
    fulltext=(  # one full-text index over these fields (catalogue FAQ search)
        ("Faq", "question"),
        ("Faq", "answer"),
        ("Faq", "keywords"),
    ),
))
