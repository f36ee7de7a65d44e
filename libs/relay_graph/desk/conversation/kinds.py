"""The kinds of answer a desk reply is made of. Intake records them on the reply (the AgentReply
episode's `answers`, and POST /chat's `reply.answers`) so what the desk did with a turn is data,
not something to guess from the wording."""

from __future__ import annotations

from enum import Enum

from relay_graph.desk.conversation.guardrails import GuardKind


class ReplyKind(str, Enum):
    # the ticket work
    TICKET_OPENED = "ticket_opened"
    TICKET_STATUS = "ticket_status"  # a problem they already have a ticket for: where it stands
    UPDATE = "update"  # "any update?": the stage and the last step
    NO_TICKETS = "no_tickets"
    OUTAGE = "outage"
    CONFIRMATION = "confirmation"
    TIP = "tip"
    READING = "reading"  # "it's a bit better now", noted on the ticket
    PROMISE = "promise"
    PROMISE_OVERDUE = "promise_overdue"  # a promise past its due time on an open ticket, owned up to
    # what is on file
    NOTED = "noted"
    ASK = "ask"
    GREETING = "greeting"
    # what they ask of their own file
    ON_FILE = "on_file"  # "what do you know about me?"
    HISTORY = "history"  # "where did you have me before?"
    ERASE_ASKED = "erase_asked"  # "delete my data": what would go, and are you sure?
    ERASED = "erased"  # their data is gone (the reply is not stored)
    ERASE_KEPT = "erase_kept"  # "no": nothing deleted
    PLAN_REQUESTED = "plan_requested"  # "book the 300 one": the request is on file
    WELCOME_BACK = "welcome_back"
    # the customer's address (intake's placing)
    PLACED = "placed"  # the home is on a line now
    CASE_MOVED = "case_moved"  # a city another regional desk serves: the case went there
    NO_LINE = "no_line"  # an unserved place: no line there
    OTHER_DESK = "other_desk"  # served by a regional desk this operator does not run
    WHICH_PLACE = "which_place"  # a place name several places share: which one?
    # the catalogue
    PLANS = "plans"
    ADDONS = "addons"
    SERVICES = "services"
    COVERAGE = "coverage"
    RECOMMENDATION = "recommendation"
    NOT_SOLD = "not_sold"
    FAQ = "faq"
    # the guardrails
    OFF_TOPIC = "off_topic"
    JOKE = "joke"
    REFUSED_INSTRUCTIONS = "refused_instructions"
    REFUSED_OTHER_CUSTOMER = "refused_other_customer"
    REFUSED_BREAK_IN = "refused_break_in"  # getting into networks or accounts that are not theirs
    AUTHORITY = "authority"
    APOLOGY = "apology"
    CLARIFY = "clarify"  # nothing to act on: what do you need?


GUARD_KINDS: dict[GuardKind, ReplyKind] = {
    GuardKind.OFF_TOPIC: ReplyKind.OFF_TOPIC,
    GuardKind.JOKE: ReplyKind.JOKE,
    GuardKind.PROMPT_INJECTION: ReplyKind.REFUSED_INSTRUCTIONS,
    GuardKind.OTHER_CUSTOMER_DATA: ReplyKind.REFUSED_OTHER_CUSTOMER,
    GuardKind.BREAK_IN: ReplyKind.REFUSED_BREAK_IN,
    GuardKind.AUTHORITY_CLAIM: ReplyKind.AUTHORITY,
    GuardKind.ABUSE: ReplyKind.APOLOGY,
}

# intake's placing of an address (Placed.status) -> the answer's kind
PLACEMENT_KINDS: dict[str, ReplyKind] = {
    "connected": ReplyKind.PLACED,
    "moved": ReplyKind.CASE_MOVED,
    "no_line": ReplyKind.NO_LINE,
    "elsewhere": ReplyKind.OTHER_DESK,
    "ambiguous": ReplyKind.WHICH_PLACE,
}

# What an answer kind asked for, recorded beside it ("ask:has_router") so a later turn of the same
# session knows the question was put already.
ASKED_PREFIX = "ask:"
