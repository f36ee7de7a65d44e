"""Who the customer is and how to reach them, for the rules extractor: a name, a phone number, an
email address, a preferred or refused way of contact."""

from __future__ import annotations

import re
from relay_graph.desk.extraction import lexicon as lx
from relay_graph.desk.extraction.topics import SPACES

# ---------------------------------------------------------------------------------------------
# Names, phone, email, contact preference.

NAME_LOOSE = re.compile(r"\b(?:my\s+name\s+is|my\s+name's|name's|the\s+name\s+is|name\s*:)\s+", re.I)
NAME_STRICT = re.compile(r"(?:^|(?<=[\s,]))(?:i'm|i\s+am|im|this\s+is|it's|it\s+is|here\s+is|here's)\s+", re.I)
SIGN_OFF = re.compile(
    r"(?:^|[.!\n]\s*)(?i:thanks|thank\s+you|regards|best|cheers|sincerely|kind\s+regards|best\s+regards|warm\s+regards)"
    r"[,!.]?\s*(?:-\s*)?(?P<n>[A-Z][^\s,.!?]*(?:\s+[A-Z][^\s,.!?]*){0,2})\s*[.!]?\s*$"
)
# "Esha Rao here.", "Ravi speaking", "Meera this side" (Indian English): a name that opens its clause
# (after a greeting) and is followed by the word that says it is the speaker.
NAME_BEFORE = re.compile(
    r"^(?:(?i:hi|hello|hey|hii+|namaste|good\s+(?:morning|afternoon|evening))\b[,!.]?\s*)?"
    r"(?P<n>[A-Z][^\W\d_][\w'-]*(?:\s+[A-Z][^\W\d_][\w'-]*){0,2})\s+(?:here|speaking|this\s+side)\b(?!\s+(?:is|are|was))"
)
# A word of a name: a letter, then letters and the marks that belong to them (a Hindi or Tamil vowel
# sign, an accent written apart) - `\w` alone stops at "अनि|ल".
_NAME_TOKEN = re.compile(r"[^\W\d_][\w'\u0300-\u036F\u0900-\u0963\u0966-\u0DFF-]*")
_LOOSE_STOP = {"and", "i", "from", "my", "i'm", "im", "we", "the", "is", "but", "so", "here", "at", "in", "on",
               "with", "calling", "speaking", "please", "thanks", "thank", "you", "and", "or", "not", "by", "for"}


def name_tokens(text: str, pos: int, strict: bool) -> str | None:
    words: list[str] = []
    cursor = pos
    while len(words) < 4:
        m = SPACES.match(text, cursor)
        t = _NAME_TOKEN.match(text, m.end())
        if not t:
            break
        tok = t.group(0)
        low = tok.lower().rstrip("'")
        if not words and low.rstrip(".") in lx.TITLES:
            cursor = t.end() + (1 if text[t.end() : t.end() + 1] == "." else 0)
            continue
        if strict:
            if low in lx.NAME_PARTICLES and words:
                nxt = _NAME_TOKEN.match(text, SPACES.match(text, t.end()).end())
                if nxt and nxt.group(0)[:1].isupper():
                    words.append(tok)
                    cursor = t.end()
                    continue
                break
            if not tok[:1].isupper() or low in lx.NAME_STOP:
                break
        else:
            if low in _LOOSE_STOP or (low in lx.NAME_STOP and not words):
                break
        words.append(tok)
        cursor = t.end()
        # a comma, full stop or the like ends a name
        if cursor < len(text) and text[cursor] not in " \t":
            break
    while words and words[-1].lower() in lx.NAME_PARTICLES:
        words.pop()
    if not words:
        return None
    name = " ".join(words)
    if name.islower():
        name = name.title()
    return name


PHONE = re.compile(r"(?<![\w+])\+?\d[\d\s().-]{5,18}\d(?![\w])")
PHONE_CONTEXT = re.compile(r"\b(?:phone|number|mobile|cell|call|ring|whatsapp|text|sms|reach|contact|tel|telephone|no\.|landline)\b", re.I)
NOT_PHONE_CONTEXT = re.compile(
    r"\b(?:account|customer\s+id|order|ticket|invoice|ref|reference|transaction|txn|id|serial|pin|otp|amount|rs\.?|inr|usd|eur|"
    r"charged|paid|bill|price|mbps|gbps|speed|mac|ip|imei)\b|[₹$€£]",
    re.I,
)
EMAIL = re.compile(r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
CONTACT_SAID = [
    (re.compile(r"\b(?:call|ring|phone)\s+(?:me|us)\b", re.I), "phone"),
    (re.compile(r"\b(?:text|sms)\s+(?:me|us)\b", re.I), "sms"),
    (re.compile(r"\b(?:whatsapp|whats\s+app)\s+(?:me|us)\b", re.I), "whatsapp"),
    (re.compile(r"\b(?:e-?mail|mail)\s+(?:me|us)\b", re.I), "email"),
    (re.compile(r"\b(?:message|chat\s+with)\s+(?:me|us)\s+(?:here|in\s+(?:the\s+)?chat|on\s+(?:the\s+)?chat)\b", re.I), "chat"),
]
_METHOD = r"(?P<m>e-?mail|emails|phone|calls?|sms|texts?|whatsapp|chat|messages)"
CONTACT_PREFER = [
    re.compile(rf"\bprefer(?:red|s|ably)?\b(?:\s+(?:to\s+be\s+)?(?:contacted|reached|updated|notified))?(?:\s+(?:by|via|over|on|through))?\s+(?:an?\s+)?{_METHOD}\b", re.I),
    re.compile(rf"\b{_METHOD}\s+(?:is|would\s+be|works)\s+(?:best|better|preferred|easiest|fine|good|great)\b", re.I),
    re.compile(rf"\b{_METHOD}\s+(?:please|preferred|only)\b", re.I),
    re.compile(rf"\b(?:contact|reach|update|notify|get\s+back\s+to|get\s+in\s+touch\s+with|let)\s+(?:me|us)\b(?:\s+know)?\s+(?:by|via|over|on|through)\s+{_METHOD}\b", re.I),
    re.compile(rf"\b(?:only|just)\s+(?:by|via|over|through)\s+{_METHOD}\b", re.I),
]
CONTACT_REFUSED = re.compile(
    rf"(?:\b(?:don't|do\s+not|never|please\s+don't|pls\s+don't|stop)\s+(?:call|ring|phone)(?:ing)?\s+(?:me|us)\b)|\bno\s+(?:phone\s+)?calls\b|\bnot\s+(?:by|via|over)\s+(?:phone|call)\b",
    re.I,
)


_OLD_CONTACT = re.compile(r"\b(?:not|old|previous|former|no\s+longer|used\s+to\s+be|stopped\s+using)\b[^,;]{0,30}$", re.I)


def old_contact(text: str, start: int, end: int) -> bool:
    """"not the old one x@y.com", "my old number 98... is no longer active": a detail to retire."""
    clause_start = max(text.rfind(",", 0, start), text.rfind(";", 0, start)) + 1
    return bool(_OLD_CONTACT.search(text[max(clause_start, start - 60) : start])) or bool(
        re.match(r"^[^,;]{0,25}\b(?:is\s+)?(?:no\s+longer|not\s+(?:in\s+use|active|valid|mine)|anymore)\b", text[end : end + 60], re.I)
    )


def contact_method(word: str) -> str:
    w = word.lower()
    if w.startswith(("e-mail", "email")):
        return "email"
    if w.startswith(("call", "phone")):
        return "phone"
    if w.startswith(("sms", "text")):
        return "sms"
    if w.startswith("whatsapp"):
        return "whatsapp"
    return "chat"


