"""A customer's answer to "shall I delete your data?" (the desk asked it on its last reply, label
"ask:erase"). No: nothing is deleted and the reply says so, stored as any reply. Yes: the
customer-scoped forget runs (usecases.customers.forget_me, what the admin forget does for one
customer) and the last reply says what was removed, from the forget's own receipt: a deletion that
did not happen is never claimed. That reply is not stored (the customer and their conversations
are gone): it is kept a few minutes only and announced (usecases.replies.say_farewell), so the chat
waiting for it and the customer's live channel get it; the site ends their session on it."""

from __future__ import annotations

import logging

from relay_graph.desk.conversation import Part, ReplyKind
from relay_graph.desk.conversation import templates as replies
from relay_graph.usecases import customers as customer_cases
from relay_graph.usecases.context import Call
from relay_graph.usecases.operations import ForgetReceipt
from relay_graph.usecases import replies as reply_cases
from relay_graph.usecases.replies import ReplyDraft, after

from .deciding import Words
from .replying import Turn, TurnResult, reply

log = logging.getLogger("services.intake")


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def removed_words(r: ForgetReceipt) -> str:
    """What the forget removed, from its receipt, in words."""
    parts = [_plural(r.facts, "detail") + " on your file" if r.facts else "",
             _plural(r.episodes, "message") + " from our conversations" if r.episodes else "",
             _plural(r.sessions, "conversation") if r.sessions else "",
             _plural(r.tickets, "ticket") + " with their history" if r.tickets else "",
             "your customer record" if r.entity else ""]
    said = [p for p in parts if p]
    if not said:
        return ("There was nothing left to delete: we hold no personal data about you any more. "
                "This chat ends here.")
    body = ", ".join(said[:-1]) + (" and " if len(said) > 1 else "") + said[-1]
    return (f"Done: I have deleted {body}. We keep nothing else about you, and this message is not stored. "
            "This chat ends here; you are welcome back any time.")


async def answer(call: Call, turn: Turn, verdict: bool) -> TurnResult:
    if not verdict:
        words = Words([Part(ReplyKind.ERASE_KEPT, replies.Reply(
            "All right: nothing has been deleted, your data stays as it is.", []))])
        return await reply(call, turn, words, None, None)
    receipt = await customer_cases.forget_me(call, turn.customer)
    log.info("customer %s erased on their request (turn %s)", turn.customer, turn.episode.episode_id)
    draft = ReplyDraft(id=turn.reply_id, session=turn.session, customer=turn.customer, text=removed_words(receipt),
                       reply_to=turn.episode.episode_id, version=turn.n.seq, at=after(call.now(), turn.episode.at),
                       answers=(ReplyKind.ERASED.value,))
    await reply_cases.say_farewell(call, draft)
    return TurnResult(reply=draft, answers=[ReplyKind.ERASED.value], erased=receipt)
