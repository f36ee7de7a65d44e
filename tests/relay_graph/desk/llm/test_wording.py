"""Wording replies: Groq may reword the templated reply, behind the honest-reply check; anything
that names what the graph did not return, drops the customer's ticket id, or fails, is thrown away
and the template is sent. Without a key: the template, and no request."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from relay_graph.desk.conversation import templates as replies
from relay_graph.desk.llm import (
    CHAT_COMPLETIONS_URL,
    DEFAULT_WRITE_MODELS,
    GroqWriter,
    ReplyWriter,
    TemplateWriter,
    build_writer,
)
from relay_graph.desk.llm.wording import build_wording_messages

from .fakes import Clock, Groq, completion, error

AT = datetime(2026, 9, 5, 10, 2, tzinfo=timezone.utc)
TICKET = "T-1A2B3C4D5E6F"
OUTAGE = "out-3f9a0c2d11e4b5a6"
DRAFT = replies.ticket_opened(TICKET, AT, "intake", "Slow speed on Wi-Fi, upstairs", handed_to="resolver")
ROWS = [{"ticket_id": TICKET, "stage": "handed_off", "opened_at": AT, "issue": "slow_speed"}]
SAID = "mera wifi upar bahut slow hai"


def writer(groq: Groq, **kw) -> GroqWriter:
    clock = Clock()
    return GroqWriter(["k1", "k2"], ["w1", "w2"], groq.transport, sleep=clock.sleep, clock=clock, **kw)


async def test_the_exact_request_and_a_clean_wording_is_kept() -> None:
    worded = f"Sorry about the slow Wi-Fi upstairs! I've opened ticket {TICKET} and our resolver will check your line."
    groq = Groq(completion(worded))
    w = writer(groq)
    assert isinstance(w, ReplyWriter)
    got = await w.word(DRAFT, rows=ROWS, customer_text=SAID)

    (req,) = groq.requests
    assert str(req.url) == CHAT_COMPLETIONS_URL and req.headers["authorization"] == "Bearer k1"
    (body,) = groq.bodies()
    assert body["model"] == "w1" and body["temperature"] == 0 and "response_format" not in body
    assert body["messages"] == build_wording_messages(DRAFT, ROWS, SAID)
    system, user = body["messages"]
    assert "Never add an id" in system["content"]
    assert DRAFT.text in user["content"] and SAID in user["content"] and '"stage": "handed_off"' in user["content"]
    assert DRAFT.how_i_know[0] in user["content"]

    assert got == replies.Reply(worded, DRAFT.how_i_know)
    assert w.last_outcome == "worded"


@pytest.mark.parametrize("worded", [
    f"Ticket {TICKET} is open, and I have also refunded invoice INV-2291.",  # an invoice nobody returned
    f"Ticket {TICKET} is open; it is linked to outage {OUTAGE}.",  # an outage nobody returned
    "I've opened ticket T-000000000042 for you.",  # a ticket id made up
    f"Ticket {TICKET} is open and you'll get ₹500 credit.",  # a price nobody returned
    f"Ticket {TICKET} is open; a technician will call you by 14:30.",  # a time nobody returned
    f"Ticket {TICKET} is open and the technician visited this morning.",  # a step that did not happen
    f"Ticket {TICKET} has been fixed, so nothing more is needed.",  # a stage the ticket is not at
    f"Ticket {TICKET} is open and our team in Pune is on it.",  # a place the rows do not name
])
async def test_a_wording_that_invents_is_thrown_away(worded: str) -> None:
    w = writer(Groq(completion(worded)))
    assert await w.word(DRAFT, rows=ROWS, customer_text=SAID) is DRAFT
    assert w.last_outcome == "template: invented"


async def test_a_wording_may_name_what_the_rows_returned() -> None:
    draft = replies.outage_notice(OUTAGE, "Koregaon Park", AT, ticket_id=TICKET)
    worded = f"There's an outage ({OUTAGE}) in Koregaon Park; your ticket {TICKET} is linked to it, no need to restart."
    got = await writer(Groq(completion(worded))).word(draft, rows=[{"outage_id": OUTAGE}], customer_text="no internet")
    assert got.text == worded and got.how_i_know == draft.how_i_know


async def test_a_wording_that_drops_the_ticket_id_is_thrown_away() -> None:
    w = writer(Groq(completion("Sorry about that! Our team is looking into your slow Wi-Fi.")))
    assert await w.word(DRAFT, rows=ROWS) is DRAFT
    assert w.last_outcome == f"template: dropped {TICKET}"


async def test_when_groq_has_no_answer_the_template_is_sent() -> None:
    groq = Groq(*[error(500) for _ in range(6)])
    w = writer(groq)
    assert await w.word(DRAFT, rows=ROWS) is DRAFT
    assert w.last_outcome == "template: llm unavailable" and len(groq.requests) == 6


async def test_an_empty_or_structured_answer_goes_to_the_next_model() -> None:
    worded = f"Ticket {TICKET} is open and with our resolver."
    groq = Groq(completion("   "), completion('{"reply": "x"}'))
    assert await writer(groq).word(DRAFT) is DRAFT
    groq = Groq(completion("```text```"), completion(worded))
    assert (await writer(groq).word(DRAFT)).text == worded


async def test_without_a_key_only_templates() -> None:
    w = build_writer(None)
    assert isinstance(w, TemplateWriter)
    assert await w.word(DRAFT, rows=ROWS, customer_text=SAID) is DRAFT


async def test_with_a_key_the_writer_uses_the_write_models() -> None:
    class Settings:
        groq_key = "gsk_x"

    groq = Groq(completion(f"Ticket {TICKET} is open."))
    clock = Clock()
    w = build_writer(Settings(), transport=groq.transport, sleep=clock.sleep, clock=clock)
    assert isinstance(w, GroqWriter)
    await w.word(DRAFT)
    assert groq.calls() == [("gsk_x", DEFAULT_WRITE_MODELS[0])]
    await w.aclose()
