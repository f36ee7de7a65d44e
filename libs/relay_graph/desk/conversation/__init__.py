"""The intake desk's conversation: what a turn asks beyond its facts and problem (asks.py, pure),
the answers' words from graph rows (compose.py, pure), the reads behind them (reads.py,
answering.py) and the kinds a reply is made of (kinds.py), recorded on the reply."""

from relay_graph.desk.conversation.answering import Answered, TicketActs, TicketRef, answer_asks, update_parts
from relay_graph.desk.conversation.asks import Ask, AskKind, Household, household_of, recognise
from relay_graph.desk.conversation.compose import Part
from relay_graph.desk.conversation.kinds import ASKED_PREFIX, GUARD_KINDS, PLACEMENT_KINDS, ReplyKind

__all__ = ["ASKED_PREFIX", "Answered", "Ask", "AskKind", "GUARD_KINDS", "Household", "PLACEMENT_KINDS", "Part", "ReplyKind", "TicketActs", "TicketRef",
           "answer_asks", "household_of", "recognise", "update_parts"]
