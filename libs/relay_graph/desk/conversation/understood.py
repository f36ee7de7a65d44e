"""Answers to the desk's own questions. The desk records what it asked on its reply ("ask:has_router",
kinds.ASKED_PREFIX); the next turn of the session is read as the answer to it first: a router's
make and model in free text ("the white one you gave me" is the one we supply), a phone number, how
many share the line ("we r 4 ppl"), when it suits them to be called. When nothing in the answer
reads as what was asked, and the turn has no other business, the raw answer is kept against the
question (`answered`: "has_router: the grey box by the tv", with the turn as its source), so the
desk says what it understood and moves on instead of asking them to say more.

Pure (regular expressions, no I/O): the caller files what it returns as facts. May use the desk's
extraction schema and the conversation's asks."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from relay_graph.desk.conversation.asks import household_of
from relay_graph.desk.conversation.kinds import ASKED_PREFIX
from relay_graph.desk.extraction.gazetteer import known_names
from relay_graph.desk.extraction.topics import router_in
from relay_graph.desk.extraction.schema import ExtractedFact, Extraction, Intent, checked_fact

# the questions whose answers this module reads (registry predicates)
ANSWERABLE = ("has_router", "phone", "household_size", "prefers_time")
MAX_RAW = 250

_I = re.I
_OWN_ROUTER = re.compile(
    r"\b(?:you|u|you\s+(?:guys|people|folks|all)|your\s+(?:company|team|technician|tech|guy|guys|people|installer)|the\s+(?:company|technician|tech"
    r"|installer|provider|engineer))\s+(?:gave|give|provided|supplied|sent|installed|put\s+in|fitted|set\s+up|brought)\b"
    r"|\b(?:came|comes|come)\s+with\s+(?:the|my|our)\s+(?:connection|plan|installation|fib(?:re|er)|line|package)\b"
    r"|\b(?:your|the\s+company'?s|the\s+provider'?s)\s+(?:own\s+)?(?:router|box|one|modem|device)\b|\bthe\s+one\s+from\s+(?:you|u)\b"
    r"|\b(?:company|provider)\s+(?:router|box|one)\b", _I)
_TIME = re.compile(
    r"\b(?:any\s*time|anytime|whenever|(?:early\s+|late\s+)?(?:mornings?|afternoons?|evenings?|nights?)|weekends?|weekdays?"
    r"|lunch\s*time|after\s+(?:work|office|lunch)|office\s+hours"
    r"|(?:before|after|by|around|between|from)\s+\d{1,2}(?::\d{2})?\s*(?:am|pm)?(?:\s*(?:-|to|and)\s*\d{1,2}(?::\d{2})?\s*(?:am|pm)?)?"
    r"|\d{1,2}(?::\d{2})?\s*(?:am|pm)(?:\s*(?:-|to)\s*\d{1,2}(?::\d{2})?\s*(?:am|pm)?)?)\b", _I)
_ISP_BOX = re.compile(
    r"\b(?:xfinity|comcast|spectrum|verizon(?:\s+fios)?|at&t|att|cox|optimum|frontier|bt|sky|virgin(?:\s+media)?|talktalk"
    r"|plusnet|ee|vodafone|orange|sfr|bouygues|free|eir|telekom|jio(?:\s*fiber)?|airtel(?:\s+xstream)?|act|hathway|bsnl|excitel"
    r"|rogers|bell|telus|shaw)\s+(?:smart\s+)?(?:gateway|hub|home\s*hub|box|modem|router|livebox|freebox|fritz\w*)(?:\s+\w*\d\w*)?\b", _I)
_PHONE = re.compile(r"(?<![\w.])\+?\d[\d\s().-]{5,18}\d(?![\w.])")
# what an answer to the question must hold to be kept as said (a number has digits)
_SHAPED = {"phone": re.compile(r"\d")}
# "ok", "thanks", "yes", "hmm", and runs of them ("thank u so much!", "hmm alright then"): not an
# answer to keep
_BARE = re.compile(r"^\W*(?:(?:ok(?:ay)?|k|kk|thanks?|thank\s*(?:you|u)|thx|ty|cheers|yes|yeah|yep|no|nope|nah|sure|hmm+"
                   r"|fine|cool|great|alright|right|hi|hello|hey|so|much|very|a\s+lot|lots|mate|then|got\s+it|perfect"
                   r"|awesome)\W*)+$", _I)


def asked_last(labels: Iterable[str]) -> list[str]:
    """The questions the desk's last reply asked (its "ask:<what>" labels)."""
    return [label[len(ASKED_PREFIX):] for label in labels if label.startswith(ASKED_PREFIX)]


def _router(text: str, own_router: str) -> str | None:
    """The provider's own ("the white one you gave me"), else a maker and model: after the desk
    asked for the router, a maker that also makes phones ("Huawei HG8145V5") means the router."""
    if _OWN_ROUTER.search(text):
        return own_router
    hits = router_in(known_names((), (), ()), text, router_word_near=True)
    if hits:
        return hits[0][2]
    isp = _ISP_BOX.search(text)  # "xfinity gateway", "BT hub": another provider's own box
    return " ".join(isp.group(0).split()) if isp else None


def _phone(text: str, _own: str) -> str | None:
    m = _PHONE.search(text)
    return m.group(0).strip() if m else None


def _household(text: str, _own: str) -> str | None:
    people = household_of(text).people
    return str(people) if people else None


def _time(text: str, _own: str) -> str | None:
    m = _TIME.search(text)
    return " ".join(m.group(0).lower().split()) if m else None


_READERS = {"has_router": _router, "phone": _phone, "household_size": _household, "prefers_time": _time}


def understand(asked: Sequence[str], text: str, extraction: Extraction, *, own_router: str) -> list[ExtractedFact]:
    """What the turn answers of the questions asked, beyond what the extractor read already (its
    facts win: a model it read is better than our reading)."""
    have = {f.predicate for f in extraction.facts}
    out: list[ExtractedFact] = []
    for q in asked:
        reader = _READERS.get(q)
        if reader is None or q in have:
            continue
        value = reader(text, own_router)
        fact = checked_fact(q, value) if value else None
        if fact is not None:
            out.append(fact)
    return out


def raw_answer(asked: Sequence[str], text: str, extraction: Extraction, *, other_business: bool) -> ExtractedFact | None:
    """The answer kept as it was said, against the first question asked that it could answer, when
    nothing in it answers that question and the turn has no other business (no problem, no ask, no
    word on a ticket) and it is more than "ok". Other facts it mentions ("next to the telly") are
    filed beside it. A question whose answer has a shape (a phone number has digits) is not answered
    by words without it: "it's red and blinking" is about something else."""
    if not asked or other_business or extraction.problem is not None:
        return None
    if any(f.predicate in asked for f in extraction.facts):
        return None  # answered in words the extractor read
    if extraction.intent in (Intent.CONFIRM_FIXED, Intent.CONFIRM_NOT_FIXED) or _BARE.match(text):
        return None
    question = next((q for q in asked if q not in _SHAPED or _SHAPED[q].search(text)), None)
    said = " ".join(text.split())
    if len(said) > MAX_RAW:
        said = said[: MAX_RAW - 1] + "…"
    return checked_fact("answered", f"{question}: {said}") if said and question else None


def with_facts(extraction: Extraction, more: Sequence[ExtractedFact]) -> Extraction:
    """The extraction with the answers' facts added (the intent says information was given)."""
    if not more:
        return extraction
    intent = extraction.intent if extraction.intent is not Intent.OTHER else Intent.GIVE_INFO
    return extraction.model_copy(update={"facts": [*extraction.facts, *more], "intent": intent})


__all__ = ["ANSWERABLE", "asked_last", "raw_answer", "understand", "with_facts"]
