"""The rules extractor: what the intake agent understands of a message when there is no LLM.

Deterministic regular expressions and small word lists, no I/O. It is built to be careful rather
than clever: a fact it is unsure of is left out (the agent can ask), and every value goes through
the predicate registry's checks, so "my router is slow" never files "slow" as a router. What it
reads, it reads per clause, so "I no longer live in Pune and we moved to Mumbai" ends one fact
and starts another; questions and "if ..." sentences assert nothing."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache

from relay_graph.memory.entities import name_key
from relay_graph.runtime.errors import InvalidInput
from relay_graph.desk.extraction import lexicon as lx
from relay_graph.desk.extraction.gazetteer import Known, fold_text, known_names
from relay_graph.desk.extraction.language import language_hint
from relay_graph.desk.extraction.port import ExtractionContext
from relay_graph.desk.extraction.schema import (
    ExtractedFact,
    Extraction,
    Intent,
    IssueKind,
    ProblemReport,
    checked_fact,
)
from relay_graph.desk.extraction.timehints import TIME_RE, normalise

MAX_TEXT_CHARS = 8_000  # an episode's limit; anything longer is read up to here
MAX_FACTS = 40  # per message and bucket: a pasted log must not become a thousand facts
_EMPTY = ExtractionContext()


# ---------------------------------------------------------------------------------------------
# Sentences and clauses.

_AUX = r"(?:is|are|was|were|do|does|did|can|could|will|would|should|shall|have|has|may|am)"
_WH = r"(?:what|where|when|why|how|which|who|whose)"
_LEAD = r"^(?:(?:so|and|but|ok|okay|also|hi|hello|hey|please|um|btw|sorry)[,!]?\s+)*"
_QUESTION_START = re.compile(
    rf"{_LEAD}(?:{_WH}(?:'s|'re)?\s+(?:{_AUX}\b|long\b|much\b|many\b|about\b|else\b|come\b)|{_WH}'s\b"
    rf"|{_AUX}\s+(?:you|u|i|we|it|there|the|my|our|this|that|someone|anyone|somebody|anybody|he|she|they|your)\b)",
    re.I,
)
_REQUEST = re.compile(
    rf"{_LEAD}(?:(?:can|could|would|will)\s+(?:you|u|someone|somebody|i|we)\b)|\bplease\b|\bpls\b|\bkindly\b", re.I
)
_CONDITIONAL = re.compile(rf"{_LEAD}(?:if|unless|in\s+case|whether|suppose|supposing|what\s+if)\b", re.I)
_BARE_SUBJECT = re.compile(r"(?:i|me|we|us|myself|(?:my|our)\s+[\w'-]+)", re.I)
_BARE_NAME = re.compile(r"[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+){0,2}")
_SENTENCE_SPLIT = re.compile(
    r"(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\bSt\.)(?<!\bProf\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<=[.!?])\s+|\n+|;\s*"
)
_CLAUSE_SPLIT = re.compile(
    r",\s*|\s+-\s+|\s+(?:but|and|so|because|cause|though|although|however|whereas|while|plus|then)\s+", re.I
)


@dataclass
class _Clause:
    text: str
    question: bool
    request: bool
    conditional: bool

    @property
    def asserts(self) -> bool:
        """Statements assert facts; questions and conditions do not."""
        return not (self.question or self.conditional)


@dataclass
class _Sentence:
    text: str
    question: bool
    request: bool
    conditional: bool
    clauses: list[_Clause] = field(default_factory=list)


def _sentences(text: str) -> list[_Sentence]:
    out = []
    for raw in _SENTENCE_SPLIT.split(text):
        s = raw.strip(" \t\"'()[]")
        if not s:
            continue
        ends_asking = s.rstrip().endswith("?")
        conditional = bool(_CONDITIONAL.search(s))
        parts: list[str] = []
        glue_next = False
        for p in _CLAUSE_SPLIT.split(s):
            p = p.strip(" .!?\"'")
            if not p:
                continue
            if parts and glue_next:
                parts[-1] += " and " + p  # "me and my wife moved ...": one subject, one clause
            elif parts and _BARE_NAME.fullmatch(p):
                parts[-1] += ", " + p  # "Koregaon Park, Pune": a bare place belongs to the clause before
            else:
                parts.append(p)
            glue_next = bool(_BARE_SUBJECT.fullmatch(parts[-1]))
        # "We moved to Mumbai, can you transfer my line?": only the asking clause is a question
        clauses = [
            _Clause(p, bool(_QUESTION_START.search(p)) or (ends_asking and i == len(parts) - 1),
                    bool(_REQUEST.search(p)), conditional)
            for i, p in enumerate(parts)
        ]
        question = any(c.question for c in clauses)
        request = bool(_REQUEST.search(s)) or any(c.request for c in clauses)
        out.append(_Sentence(s, question, request, conditional, clauses))
    return out


def _prepare(text: object) -> str:
    if not isinstance(text, str):
        raise InvalidInput("text must be a string")
    t = unicodedata.normalize("NFKC", text)[:MAX_TEXT_CHARS]
    t = t.translate({0x2019: "'", 0x2018: "'", 0x201C: '"', 0x201D: '"', 0x2013: "-", 0x2014: " - "})
    t = "".join(" " if unicodedata.category(c) in ("Cc", "Cf") and c != "\n" else c for c in t)
    return re.sub(r"\n\s*", "\n", re.sub(r"[^\S\n]+", " ", t))


# ---------------------------------------------------------------------------------------------
# Who is speaking about whom.

_KIN = (r"(?:brother|sister|mom|mum|mother|dad|father|wife|husband|partner|friend|neighbou?r|son|daughter|parents?"
        r"|kids?|children|flatmate|roommate|colleague|boss|uncle|aunt|cousin|grand\w+|landlord|tenant|in-laws?)")
_THIRD_PARTY_POSSESSIVE = re.compile(
    rf"\b(?:his|her|their|(?!(?:it|that|what|who|there|here|name|let|he|she|today)'s)[a-z]+'s|{_KIN}s?')\s+"
    r"(?:(?:phone|mobile|cell|contact|whatsapp|email|e-mail)\s+)?(?:number|no\.?|email|e-mail|mail|address|id)\b",
    re.I,
)


_OTHERS = re.compile(
    r"\b(?:his|her|their|(?!(?:it|that|what|there|here|who|he|she|let|where|how)'s)[a-z]+'s|[a-z]+s')(?=\s)", re.I
)
_HOUSEHOLD = re.compile(r"\b(?:kids?'?s?|son's|daughter's|children's|family's)\s*$", re.I)


def _someone_elses(prefix: str, *, household_ok: bool = False) -> bool:
    """True when the thing named after `prefix` is someone else's ("my neighbour's router is a ...")."""
    last = None
    for last in _OTHERS.finditer(prefix):
        pass
    if last is None:
        return False
    if household_ok and _HOUSEHOLD.search(prefix[: last.end()]):
        return False
    return not re.search(r"\b(?:i|my|we|our|me|mine)\b", prefix[last.end() :], re.I)


_SUBJECT_FILLER = re.compile(
    r"(?:\s|\b(?:just|recently|also|finally|already|now|all|both|have|has|had|'ve|'s|is|are|was|were|currently|still"
    r"|actually|officially)\b)*$",
    re.I,
)
_FILLER_WORDS = {"hi", "hello", "hey", "so", "ok", "okay", "also", "and", "but", "yes", "yeah", "well", "btw", "fyi",
                 "update", "note", "news", "good", "great", "today", "yesterday", "then", "finally", "anyway"}


def _third_party(prefix: str) -> bool:
    """True when the words before a verb make someone or something else its subject ("my brother
    moved ...", "our office moved ...", "they live ..."). No subject at all reads as the customer."""
    tail = _SUBJECT_FILLER.sub("", prefix[-80:]).rstrip()
    if not tail or re.search(r"\b(?:i|we|i've|we've|i'd|we'd|me|us|im|i'm|we're)$", tail, re.I):
        return False
    if re.search(r"\b(?:i|me|we|us|myself)\s+and\b|\band\s+(?:i|me|myself)\b", tail[-40:], re.I):
        return False  # "me and my wife", "my wife and I"
    if re.search(r"\b(?:he|she|they|it|you|someone|somebody|everyone|people|who)$", tail, re.I):
        return True
    if re.search(r"\b(?:my|our|the|his|her|their|your|a|an|this|that)\s+(?:[\w'-]+\s+){0,2}[\w'-]+$", tail, re.I):
        return True
    last = re.search(r"([A-Za-z][\w'-]*)$", tail)
    return bool(last and last.group(1)[0].isupper() and last.group(1).lower() not in _FILLER_WORDS)


# ---------------------------------------------------------------------------------------------
# Where the customer lives.

_LIVE = re.compile(
    r"\b(?P<pre>(?:(?:i|we)(?:'m|'re|\s+am|\s+are)?\s+)?(?:(?:currently|now|still|also|no\s+longer|not|never|"
    r"used\s+to|don't|do\s+not|didn't|did\s+not)\s+)*(?:(?:'ve|have|has)\s+(?:been\s+)?)?)"
    r"(?P<verb>live|living|lived|reside|residing|resided|based|located|settled)\s+(?:in|at|near|out\s+of)\s+",
    re.I,
)
_HOME_IS = re.compile(r"\b(?:my|our)\s+(?:new\s+|current\s+)?(?:home|house|flat|apartment|address|place)\s+(?:is\s+)?(?:in|at)\s+", re.I)
_NOT_IN = re.compile(r"\b(?:i'm|i\s+am|we're|we\s+are)\s+(?:no\s+longer|not)\s+(?:living\s+|based\s+)?(?:in|at)\s+", re.I)
_MOVED_TO = re.compile(
    r"\b(?:(?:have|'ve|has|had|just|recently|finally|already|now)\s+)*(?:moved|relocated|shifted)"
    r"\s+(?:(?:back|over|house|home|flat|out)\s+)?(?:to|into|in\s+to)\s+",
    re.I,
)
_MOVED_FROM = re.compile(r"\b(?:moved|relocated|shifted)\s+(?:(?:away|out|house)\s+)?(?:from|out\s+of)\s+", re.I)
_LEFT = re.compile(r"\b(?:i|we)\s+(?:have\s+|'ve\s+|just\s+)?left\s+", re.I)
_MOVING_TO = re.compile(
    r"\b(?P<pre>(?:before|after|since)\s+)?(?:moving|relocating|shifting|(?:going|planning|plan|want|wanting|hoping|about|"
    r"intend|intending|need|have|'d\s+like|would\s+like|will|'ll|gonna|wanna|soon)\s+(?:to\s+)?(?:move|relocate|shift))"
    r"\s+(?:(?:back|over|house|home)\s+)?(?:to|into)\s+",
    re.I,
)
_ENDED_AFTER = re.compile(r"^[^,;]{0,30}?\b(?:anymore|any\s+more)\b", re.I)
_NEGATED_BEFORE = re.compile(r"(?:\b(?:not|never|no)\b|n't)[\w\s']{0,12}$", re.I)
_PLACE_STOP = {"the", "a", "an", "my", "our", "apartment", "flat", "house", "building", "street", "road", "tower",
               "block", "sector", "phase", "floor", "room", "home", "office", "city", "town", "village", "area",
               "india", "france", "germany", "spain", "italy", "portugal", "uk", "usa", "us", "america", "canada",
               "mexico", "brazil", "argentina", "japan", "china", "australia", "europe", "asia", "england",
               "scotland", "wales", "ireland", "netherlands", "belgium", "switzerland", "austria", "poland",
               "it", "there", "here", "this", "that", "your", "fiber", "fibre", "wifi", "internet", *lx.WEEKDAYS,
               *lx.MONTHS}
_UNKNOWN_PLACE = re.compile(r"([A-Z][\w'-]+(?:\s+(?:de|da|del|upon|on|am|sur)?\s*[A-Z][\w'-]+){0,2})")


def _city_at(known: Known, text: str, pos: int, *, scan: bool = True) -> tuple[str, int] | None:
    """The city named at `pos`: a known one; with `scan`, a known one a few words on ("a new flat
    in Mumbai", "Koregaon Park, Pune"); else a capitalised place name we do not know yet."""
    hit = known.cities.match_at(text, pos)
    if hit:
        return hit[1], hit[0]
    if scan:
        for _start, end, canonical in known.cities.find_all(text, pos, min(len(text), pos + 40)):
            return canonical, end
    m = _UNKNOWN_PLACE.match(text, pos)
    if m:
        words = m.group(1).split()
        if words[0].lower() not in _PLACE_STOP and not any(ch.isdigit() for ch in m.group(1)):
            kept = [words[0]]
            for w in words[1:]:
                if w.lower() in _PLACE_STOP:
                    break
                kept.append(w)
            end = pos
            for w in kept:
                end = text.index(w, end) + len(w)
            return " ".join(kept), end
    return None


# ---------------------------------------------------------------------------------------------
# Plans.

_ON_PLAN = re.compile(
    r"\b(?:i'?m|i\s+am|we'?re|we\s+are|currently|still|now)\s+(?:(?:currently|still|now|already)\s+)?on\s+(?:the\s+|a\s+|my\s+)?",
    re.I,
)
_PLAN_IS = re.compile(
    r"\b(?:my|our)\s+(?:current\s+|new\s+|internet\s+|broadband\s+)?(?:plan|package|subscription|tariff)\s+(?:is|'s)\s+(?:the\s+|a\s+)?",
    re.I,
)
_HAVE_PLAN = re.compile(
    r"\b(?:i|we)\s+(?:(?:currently|still|now|already)\s+)?(?:have|'ve\s+got|got|pay\s+for|subscribe\s+to|use)\s+(?:the\s+|a\s+)?",
    re.I,
)
_SWITCHED_TO = re.compile(
    r"\b(?:switched|upgraded|downgraded|changed|moved|migrated|subscribed|signed\s+up)\s+(?:(?:my\s+plan|our\s+plan|plans?)\s+)?"
    r"(?:to|for|onto|on\s+to)\s+(?:the\s+|a\s+)?",
    re.I,
)
_SWITCHED_FROM = re.compile(
    r"\b(?:switched|upgraded|downgraded|changed|moved|migrated)\s+(?:(?:my\s+plan|our\s+plan|plans?)\s+)?from\s+(?:the\s+|a\s+|my\s+)?",
    re.I,
)
_WANT_PLAN = re.compile(
    r"\b(?:upgrade|downgrade|switch|change|move|put|migrate|sign)\s+(?:(?:me|us|my\s+plan|our\s+plan|my\s+(?:connection|account|line)|me\s+up|us\s+up)\s+)?"
    r"(?:to|for|onto|on\s+to)\s+(?:the\s+|a\s+)?"
    r"|\b(?:want|wanna|would\s+like|'d\s+like|need|interested\s+in|get\s+me)\s+(?:to\s+(?:get|have|try|buy|take|upgrade\s+to|"
    r"switch\s+to|change\s+to|move\s+to|downgrade\s+to)\s+)?(?:the\s+|a\s+)?"
    r"|\b(?:can|could|may)\s+(?:i|we)\s+(?:get|have|switch\s+to|upgrade\s+to|move\s+to|change\s+to|downgrade\s+to)\s+(?:the\s+|a\s+)?",
    re.I,
)
_OFF_PLAN = re.compile(
    r"\b(?:no\s+longer|not)\s+on\s+(?:the\s+|a\s+|my\s+)?|\b(?:cancel(?:l?ed)?|stopped|terminated|ended|dropped)\s+(?:my\s+|our\s+|the\s+)?"
    r"|\b(?:was|were|used\s+to\s+be)\s+on\s+(?:the\s+|a\s+)?",
    re.I,
)
_PLAN_PHRASE = re.compile(
    r"(?P<words>(?:[a-z][\w+]*\s+){0,2}?)(?P<n>\d+(?:\.\d+)?)\s*(?P<u>mbps|mb/s|mbit|megs?|mb|gbps|gb/s|gigs?|gb|g)?"
    r"(?:\s*(?P<t>plan|package|pack|tier|connection|broadband))?(?![\w.])"
    r"|(?P<words2>(?:[a-z][\w+]*\s+){1,2})(?P<t2>plan|package|tier)\b",
    re.I,
)
_PLAN_WORD_STOP = {"current", "new", "old", "same", "cheap", "cheaper", "cheapest", "better", "faster", "fastest",
                   "bigger", "higher", "lower", "other", "different", "best", "monthly", "annual", "yearly", "this",
                   "that", "my", "your", "a", "an", "any", "which", "what", "data", "phone", "mobile", "payment",
                   "the", "our", "their", "only", "just", "about", "around", "like", "than", "more", "less", "up",
                   "to", "of", "for", "with", "speed", "internet", "wifi", "family", "top", "and", "or", "every",
                   "last", "next", "first", "second", "same", "whole", "entire", "good", "bad", "slow", "fast"}


def _speed_mbps(n: str, unit: str | None) -> float:
    value = float(n)
    if unit and unit.lower().startswith("g") and value < 20:
        value *= 1000
    return value


@lru_cache(maxsize=512)
def _plan_speeds(name: str) -> frozenset[float]:
    """The speeds a catalogue plan's name states, in Mbps ("Fiber 1 Gbps" -> 1000)."""
    return frozenset(_speed_mbps(n, u or None)
                     for n, u in re.findall(r"(\d+(?:\.\d+)?)\s*(gbps|gb/s|gigs?|gb|g|mbps|mb/s|mb|m)?(?![\w.])", name, re.I))


def _plan_at(known: Known, text: str, pos: int) -> tuple[str, int] | None:
    hit = known.plans.match_at(text, pos)
    if hit:
        end = hit[0]
        tail = re.match(r"\s+(?:plan|package|tier)\b", text[end : end + 20], re.I)
        return hit[1], end + (tail.end() if tail else 0)
    m = _PLAN_PHRASE.match(text, pos)
    if not m:
        return None
    if m.group("n"):
        words = [w.lower() for w in m.group("words").split()]
        named = [w for w in words if w not in _PLAN_WORD_STOP]
        unit, tail = m.group("u"), m.group("t")
        if words and not named:
            return None
        if unit and unit.lower() == "g" and not named:
            return None  # "4G" is a mobile network, not a plan
        if not (named or (unit and unit.lower() != "g") or tail):
            return None
        speed = _speed_mbps(m.group("n"), unit)
    else:
        words = [w.lower() for w in m.group("words2").split()]
        if not any(w not in _PLAN_WORD_STOP for w in words):
            return None
        speed = None
    phrase = m.group(0).strip()
    if known.plan_names and speed is not None:
        same = [p for p in known.plan_names if speed in _plan_speeds(p)]
        if len(same) == 1:
            return same[0], m.end()
    short = re.sub(r"\s+(?:plan|package|pack|tier|connection)$", "", phrase, flags=re.I)
    if re.search(r"[A-Za-z]", short) and short != phrase:
        phrase = short
    return phrase, m.end()


# ---------------------------------------------------------------------------------------------
# Routers and devices.

_ROUTER_WORD = re.compile(rf"\b{lx.ROUTER_WORDS}\b", re.I)
_ROUTER_IS = re.compile(
    r"\b(?:my|our|the)\s+(?:wi-?fi\s+)?(?:router|modem|ont|gateway)(?:\s+model)?\s+(?:is|'s)\s+(?:an?\s+|the\s+)?", re.I
)
_MODEL_CODE = re.compile(r"(?=[\w-]{0,30}[A-Za-z])(?=[\w-]{0,30}\d)[A-Za-z0-9][\w-]{0,30}")
_BAND_TOKENS = re.compile(r"^(?:\d+(?:\.\d+)?(?:g|ghz|mbps|gbps)|wifi\d|wi-fi\d|\d+(?:st|nd|rd|th))$", re.I)
_MODEL_TOKEN = re.compile(r"[\w!+-]+")
_BLANKS = re.compile(r"[ \t]+")
_SPACES = re.compile(r"\s*")
_DEVICE_AFTER = re.compile(r"^\s+(?:phone|mobile|laptop|tv|tablet|watch|speaker|earbuds|smartphone|notebook|monitor)\b", re.I)
_OWNERSHIP_ENDED = re.compile(
    r"(?:\b(?:no\s+longer\s+(?:have|own|use)|got\s+rid\s+of|sold|gave\s+away|threw\s+away|returned|used\s+to\s+(?:have|own|use)"
    r"|stopped\s+using|(?:don't|do\s+not|doesn't|does\s+not|didn't|did\s+not)\s+(?:have|own|use))"
    r"\s+(?:(?:a|an|the|my|our|any|old|that)\s+){0,2})$",
    re.I,
)
_REPLACED = re.compile(r"\b(?:replaced|swapped|exchanged|traded)\s+(?P<old>.+?)\s+(?:with|for)\s+(?P<new>.+)$", re.I)


def _is_model_token(tok: str, original_upper: bool) -> bool:
    if _BAND_TOKENS.match(tok):
        return False
    low = tok.lower()
    if low in lx.MODEL_WORDS:
        return True
    if _MODEL_CODE.fullmatch(tok):
        return True
    return original_upper and low not in lx.NAME_STOP and low not in _PLAN_WORD_STOP


def _model_tail(text: str, pos: int, limit: int = 4) -> int:
    """Where a model name that starts after a brand ends: model codes, series words and
    capitalised words continue it; anything else stops it."""
    end = pos
    count = 0
    while count < limit:
        m = _BLANKS.match(text, end)
        if not m:
            break
        t = _MODEL_TOKEN.match(text, m.end())
        if not t:
            break
        tok = t.group(0).rstrip("-")
        if _ROUTER_WORD.fullmatch(tok) or not _is_model_token(tok, tok[:1].isupper()):
            break
        end = t.start() + len(tok)
        count += 1
    return end


def _router_in(known: Known, text: str, *, router_word_near: bool) -> list[tuple[int, int, str]]:
    """Router names in a piece of text: catalogue models first, then a maker followed by its model."""
    found = [(s, e, c) for s, e, c in known.routers.find_all(text)]
    taken = [(s, e) for s, e, _ in found]
    for start, end, _canon in known.brands.find_all(text):
        if any(s <= start < e for s, e in taken):
            continue
        key = name_key(text[start:end])
        if _DEVICE_AFTER.match(text[end : end + 30]):
            continue
        if key in lx.AMBIGUOUS_BRANDS and not router_word_near:
            continue
        tail = _model_tail(text, end)
        found.append((start, tail, text[start:tail]))
        taken.append((start, tail))
    if not found:
        # no maker named: a model code just before a router word ("a G-140W-C router")
        for m in re.finditer(rf"(?P<code>{_MODEL_CODE.pattern})\s+{lx.ROUTER_WORDS}\b", text, re.I):
            if not _BAND_TOKENS.match(m.group("code")):
                found.append((m.start("code"), m.end("code"), m.group("code")))
    return found


def _router_from_phrase(known: Known, phrase: str) -> str | None:
    """What follows "my router is": a model if it reads like one, else nothing ("slow", "old")."""
    phrase = re.split(r"\s+(?:and|but|which|that|so|since|because|with|from)\s+", phrase, maxsplit=1, flags=re.I)[0]
    hits = _router_in(known, phrase, router_word_near=True)
    if hits:
        return hits[0][2]
    m = _MODEL_CODE.match(phrase)
    if m and not _BAND_TOKENS.match(m.group(0)):
        end = _model_tail(phrase, m.end())
        return phrase[: end].strip()
    return None


@dataclass
class _DeviceHit:
    start: int
    end: int
    device: str


_DETERMINER_BEFORE = re.compile(
    r"(?:\b(?:my|our|the|a|an|his|her|their|kids'?|son's|daughter's|this|that|new|old|smart|work|two|three|both)\s+(?:[\w-]+\s+)?)$", re.I
)
_DEVICE_NOT_AFTER = re.compile(r"^\s*(?:number|no\b|no\.|bill|plan|data|call|calls|network|operator|provider|company|recharge)", re.I)
_DEVICE_NOT_BEFORE = re.compile(r"\b(?:over|by|via|through)\s+(?:the\s+)?$|\bon\s+the\s+$", re.I)


def _devices_in(known: Known, text: str) -> list[_DeviceHit]:
    out = []
    for start, end, canonical in known.devices.find_all(text):
        surface = text[start:end].lower()
        before = text[max(0, start - 30) : start]
        after = text[end : end + 20]
        if _DEVICE_NOT_AFTER.match(after):
            continue
        generic = surface in lx.DEVICES_NEED_DETERMINER or surface[:-1] in lx.DEVICES_NEED_DETERMINER
        if generic and not _DETERMINER_BEFORE.search(before):
            continue
        # "on the phone (with support)", "by phone": a call, not a device
        if canonical == "phone" and (_DEVICE_NOT_BEFORE.search(before) or re.match(r"^\s+with\b", after)):
            continue
        out.append(_DeviceHit(start, end, canonical))
    return out


# ---------------------------------------------------------------------------------------------
# Names, phone, email, contact preference.

_NAME_LOOSE = re.compile(r"\b(?:my\s+name\s+is|my\s+name's|name's|the\s+name\s+is|name\s*:)\s+", re.I)
_NAME_STRICT = re.compile(r"(?:^|(?<=[\s,]))(?:i'm|i\s+am|im|this\s+is|it's|it\s+is|here\s+is|here's)\s+", re.I)
_SIGN_OFF = re.compile(
    r"(?:^|[.!\n]\s*)(?i:thanks|thank\s+you|regards|best|cheers|sincerely|kind\s+regards|best\s+regards|warm\s+regards)"
    r"[,!.]?\s*(?:-\s*)?(?P<n>[A-Z][^\s,.!?]*(?:\s+[A-Z][^\s,.!?]*){0,2})\s*[.!]?\s*$"
)
# "Esha Rao here.", "Ravi speaking", "Meera this side" (Indian English): a name that opens its clause
# (after a greeting) and is followed by the word that says it is the speaker.
_NAME_BEFORE = re.compile(
    r"^(?:(?i:hi|hello|hey|hii+|namaste|good\s+(?:morning|afternoon|evening))\b[,!.]?\s*)?"
    r"(?P<n>[A-Z][^\W\d_][\w'-]*(?:\s+[A-Z][^\W\d_][\w'-]*){0,2})\s+(?:here|speaking|this\s+side)\b(?!\s+(?:is|are|was))"
)
_NAME_TOKEN = re.compile(r"[^\W\d_][\w'-]*")
_LOOSE_STOP = {"and", "i", "from", "my", "i'm", "im", "we", "the", "is", "but", "so", "here", "at", "in", "on",
               "with", "calling", "speaking", "please", "thanks", "thank", "you", "and", "or", "not", "by", "for"}


def _name_tokens(text: str, pos: int, strict: bool) -> str | None:
    words: list[str] = []
    cursor = pos
    while len(words) < 4:
        m = _SPACES.match(text, cursor)
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
                nxt = _NAME_TOKEN.match(text, _SPACES.match(text, t.end()).end())
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


_PHONE = re.compile(r"(?<![\w+])\+?\d[\d\s().-]{5,18}\d(?![\w])")
_PHONE_CONTEXT = re.compile(r"\b(?:phone|number|mobile|cell|call|ring|whatsapp|text|sms|reach|contact|tel|telephone|no\.|landline)\b", re.I)
_NOT_PHONE_CONTEXT = re.compile(
    r"\b(?:account|customer\s+id|order|ticket|invoice|ref|reference|transaction|txn|id|serial|pin|otp|amount|rs\.?|inr|usd|eur|"
    r"charged|paid|bill|price|mbps|gbps|speed|mac|ip|imei)\b|[₹$€£]",
    re.I,
)
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
_CONTACT_SAID = [
    (re.compile(r"\b(?:call|ring|phone)\s+(?:me|us)\b", re.I), "phone"),
    (re.compile(r"\b(?:text|sms)\s+(?:me|us)\b", re.I), "sms"),
    (re.compile(r"\b(?:whatsapp|whats\s+app)\s+(?:me|us)\b", re.I), "whatsapp"),
    (re.compile(r"\b(?:e-?mail|mail)\s+(?:me|us)\b", re.I), "email"),
    (re.compile(r"\b(?:message|chat\s+with)\s+(?:me|us)\s+(?:here|in\s+(?:the\s+)?chat|on\s+(?:the\s+)?chat)\b", re.I), "chat"),
]
_METHOD = r"(?P<m>e-?mail|emails|phone|calls?|sms|texts?|whatsapp|chat|messages)"
_CONTACT_PREFER = [
    re.compile(rf"\bprefer(?:red|s|ably)?\b(?:\s+(?:to\s+be\s+)?(?:contacted|reached|updated|notified))?(?:\s+(?:by|via|over|on|through))?\s+(?:an?\s+)?{_METHOD}\b", re.I),
    re.compile(rf"\b{_METHOD}\s+(?:is|would\s+be|works)\s+(?:best|better|preferred|easiest|fine|good|great)\b", re.I),
    re.compile(rf"\b{_METHOD}\s+(?:please|preferred|only)\b", re.I),
    re.compile(rf"\b(?:contact|reach|update|notify|get\s+back\s+to|get\s+in\s+touch\s+with|let)\s+(?:me|us)\b(?:\s+know)?\s+(?:by|via|over|on|through)\s+{_METHOD}\b", re.I),
    re.compile(rf"\b(?:only|just)\s+(?:by|via|over|through)\s+{_METHOD}\b", re.I),
]
_CONTACT_REFUSED = re.compile(
    rf"(?:\b(?:don't|do\s+not|never|please\s+don't|pls\s+don't|stop)\s+(?:call|ring|phone)(?:ing)?\s+(?:me|us)\b)|\bno\s+(?:phone\s+)?calls\b|\bnot\s+(?:by|via|over)\s+(?:phone|call)\b",
    re.I,
)


_OLD_CONTACT = re.compile(r"\b(?:not|old|previous|former|no\s+longer|used\s+to\s+be|stopped\s+using)\b[^,;]{0,30}$", re.I)


def _old_contact(text: str, start: int, end: int) -> bool:
    """"not the old one x@y.com", "my old number 98... is no longer active": a detail to retire."""
    clause_start = max(text.rfind(",", 0, start), text.rfind(";", 0, start)) + 1
    return bool(_OLD_CONTACT.search(text[max(clause_start, start - 60) : start])) or bool(
        re.match(r"^[^,;]{0,25}\b(?:is\s+)?(?:no\s+longer|not\s+(?:in\s+use|active|valid|mine)|anymore)\b", text[end : end + 60], re.I)
    )


def _method(word: str) -> str:
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


# ---------------------------------------------------------------------------------------------
# Problems.

_NEG_SYMPTOM_BEFORE = re.compile(
    r"(?:\b(?:not|never|no\s+longer|no\s+more|isn't|aren't|wasn't|used\s+to\s+be|used\s+to|without|stopped)\b|n't)"
    r"(?:\s+(?:be|being|been|so|as|that|too|very|really|even|any|at\s+all|all))*\s*$",
    re.I,
)
_SYMPTOMS: list[tuple[IssueKind, re.Pattern[str]]] = [
    (IssueKind.NO_SIGNAL_LIGHT, re.compile(
        r"\blos\s+(?:light|led|indicator|lamp|is|was|blink\w*|flash\w*|red|on|lit)\b|\bred\s+(?:los|light|led)\b"
        r"|\b(?:light|led)s?\s+(?:is\s+|are\s+|was\s+|has\s+been\s+|keeps?\s+|turned\s+|went\s+)?(?:blinking\s+|flashing\s+)?red\b"
        r"|\b(?:blinking|flashing)\s+red\b|\bpon\s+(?:light|led)\s+(?:is\s+)?(?:off|blinking|flashing|out)\b"
        r"|\bno\s+(?:pon|signal)\s+light\b", re.I)),
    (IssueKind.ROUTER_FROZEN, re.compile(
        r"\b(?:router|modem|ont|hub)\b[^.!?]{0,25}?\b(?:frozen|freez\w*|stuck|hung|hangs|hanging|unresponsive|not\s+responding"
        r"|won't\s+(?:turn\s+on|start|boot|power\s+on|respond)|(?:keeps?|kept)\s+(?:rebooting|restarting|resetting|crashing)"
        r"|(?:is\s+)?dead|crash\w*|lights?\s+(?:are|is)\s+(?:all\s+)?(?:off|frozen))"
        r"|\b(?:frozen|stuck|hung|unresponsive)\s+(?:router|modem)\b", re.I)),
    (IssueKind.BILLING_DOUBLE_CHARGE, re.compile(
        r"\b(?:charged|billed|debited|deducted|took|taken|paid)\b[^.!?]{0,25}?\b(?:twice|two\s+times|2\s+times|double)\b"
        r"|\bdouble[-\s]?(?:charged|charge|billed|billing|debit\w*|payment|deduct\w*)\b"
        r"|\bduplicate\s+(?:charge|payment|bill|debit|transaction)s?\b|\b(?:two|2)\s+(?:charges|payments|debits|deductions)\b",
        re.I)),
    (IssueKind.PAYMENT_FAILED, re.compile(
        r"\bpayment\b[^.!?]{0,20}?\b(?:failed|fails|failing|declined|rejected|bounced|error|(?:didn't|doesn't|won't|did\s+not|"
        r"does\s+not|will\s+not|not)\s+go(?:ing)?\s+through)"
        r"|\b(?:card|transaction|upi|autopay|auto-pay|direct\s+debit)\b[^.!?]{0,15}?\b(?:declined|failed|rejected|bounced)\b"
        r"|\b(?:can't|cannot|unable\s+to|couldn't|could\s+not)\s+(?:make\s+(?:a|the|my)\s+)?pay(?:ment)?\b"
        r"|\bfailed\s+(?:payment|transaction)\b", re.I)),
    (IssueKind.WIFI_DROPS, re.compile(
        r"\b(?:wi-?fi|wireless)\b[^.!?]{0,20}?\b(?:keeps?\s+)?(?:drop\w*|disconnect\w*|cut\w*\s+out|cuts?\s+off|goes?\s+(?:off|away|out)"
        r"|falls?\s+off|vanish\w*|disappear\w*|(?:is\s+|very\s+|so\s+|really\s+)*(?:weak|patchy|spotty))\b"
        r"|\b(?:weak|poor|bad|patchy|spotty)\s+(?:wi-?fi|wireless|signal|coverage|reception)\b|\bdead\s+(?:zone|spot)s?\b"
        r"|\b(?:signal|coverage|reception)\s+is\s+(?:weak|poor|bad)\b", re.I)),
    (IssueKind.INTERMITTENT, re.compile(
        r"\b(?:on\s+and\s+off|off\s+and\s+on|intermittent\w*|comes\s+and\s+goes|in\s+and\s+out|unstable|flaky|keeps\s+(?:dropping|"
        r"disconnecting|cutting\s+out|going\s+(?:down|off|out))|drops?\s+(?:out\s+)?every\b|disconnect\w*\s+(?:every|randomly|"
        r"constantly|frequently|often|all\s+the\s+time)|randomly\s+disconnect\w*|cuts?\s+out\b|(?:connection|internet)\s+(?:keeps\s+)?"
        r"drop\w*|keeps\s+losing\s+(?:the\s+)?connection)", re.I)),
    (IssueKind.NO_CONNECTION, re.compile(
        r"\bno\s+(?:internet|connection|connectivity|service|network|wi-?fi)\b"
        r"|\b(?:internet|connection|broadband|fib(?:er|re)|line|network|service)\b[^.!?]{0,12}?\b(?:is\s+|'s\s+|has\s+been\s+|went\s+|was\s+)?"
        r"(?:down|dead|out|offline|gone|not\s+working|isn't\s+working|stopped\s+working|doesn't\s+work|not\s+connecting)\b"
        r"|\b(?:can't|cannot|unable\s+to|couldn't|could\s+not|won't)\s+(?:connect|get\s+online|go\s+online|browse|access\s+the\s+internet|load\s+anything)"
        r"|\bnothing\s+(?:loads|is\s+loading|works)\b|\b(?:totally|completely)\s+(?:down|offline|dead)\b|\bnot\s+connecting\b"
        r"|\boffline\b|\blost\s+(?:the\s+)?(?:internet|connection)\b"
        # a few other languages customers write in: "no funciona", "nahi chal raha", "funktioniert nicht"
        r"|\bno\s+funciona|\bnah(?:i|in)\s+chal|\bband\s+(?:hai|ho\s+gaya)|\bne\s+(?:marche|fonctionne)\s+pas"
        r"|\bfunktioniert\s+nicht|\bnão\s+funciona|\bnon\s+funziona|\bwerkt\s+niet", re.I)),
    (IssueKind.SLOW_SPEED, re.compile(
        r"\b(?:slow\w*|sluggish|crawl\w*|laggy|lagg\w*|lag|buffer\w*|high\s+(?:ping|latency)|ping\s+is\s+(?:high|bad)|low\s+speeds?"
        r"|speeds?\s+(?:is\s+|are\s+)?(?:low|bad|terrible|poor|awful|dropp\w*)|(?:only|just)\s+(?:getting|get|got)\s+(?:about\s+|around\s+)?\d+"
        r"|not\s+getting\s+(?:the\s+|my\s+)?(?:full\s+|promised\s+)?speeds?|takes?\s+forever|pages?\s+(?:take|load)\s+(?:ages|forever)"
        r"|(?:getting|shows?|showing|says|gives|measur\w+)\s+(?:only\s+)?(?:about\s+|around\s+)?\d+\s*(?:mbps|mb/s|megs?)"
        r"|lento|lenta|langsam|dheema|dheere)\b",
        re.I)),
    (IssueKind.OTHER, re.compile(
        r"\b(?:problem|issue|trouble|not\s+working|doesn't\s+work|isn't\s+working|broken|stopped\s+working|error)s?\b"
        r"|\b(?:wi-?fi|internet|connection|service|signal)\s+(?:has\s+been|is|was|'s)\s+(?:so\s+|really\s+|very\s+)?"
        r"(?:terrible|awful|horrible|bad|poor|rubbish|useless|unusable)\b", re.I)),
]
_KIND_RANK = {kind: i for i, (kind, _) in enumerate(_SYMPTOMS)}
_WIFI = re.compile(r"\b(?:wi-?fi|wireless)\b", re.I)
_WIRED = re.compile(r"\b(?:ethernet|lan\s+cable|wired|cable\s+connection|lan\s+port)\b", re.I)
_PLACE = re.compile(
    r"\b(?:(?:in|at|on)\s+(?:the|my|our)\s+)?(?P<p>" + "|".join(re.escape(p) for p in sorted(lx.PLACES, key=len, reverse=True)) + r")\b",
    re.I,
)
_LABELS = {
    IssueKind.NO_CONNECTION: "No connection",
    IssueKind.SLOW_SPEED: "Slow speed",
    IssueKind.WIFI_DROPS: "Wi-Fi keeps dropping",
    IssueKind.INTERMITTENT: "Connection drops on and off",
    IssueKind.NO_SIGNAL_LIGHT: "Red LOS light (no fibre signal)",
    IssueKind.BILLING_DOUBLE_CHARGE: "Charged twice",
    IssueKind.PAYMENT_FAILED: "Payment failed",
    IssueKind.ROUTER_FROZEN: "Router frozen",
    IssueKind.OTHER: "Problem reported",
}

_FIXED = re.compile(
    r"\b(?:works|working|fixed|sorted|resolved|solved|fine|good|ok|okay|back\s+online|back\s+up|back\s+to\s+normal|fast)\s+(?:now|again)\b"
    r"|\b(?:it's|it\s+is|is|all|everything's|everything\s+is|that's)\s+(?:now\s+)?(?:fixed|sorted|resolved|solved|working|back|good|fine)\b"
    r"|\b(?:that|this|it|the\s+(?:reboot|restart|reset))\s+(?:fixed|solved|sorted|did)\s+(?:it|the\s+(?:problem|issue|trick))\b"
    r"|\b(?:problem|issue)\s+(?:is\s+|has\s+been\s+)?(?:solved|fixed|resolved|gone|sorted)\b|\ball\s+good\b|\bthat\s+worked\b"
    r"|(?:\b(?:not|isn't|aren't|no\s+longer)\s+(?:\w+\s+){0,2}?(?:slow|dropping|down|buffering|lagging|laggy|disconnecting|frozen|red)\b[^.!?]{0,15}?\b(?:anymore|any\s+more|now)\b)"
    r"|\bno\s+longer\s+(?:slow|dropping|down|buffering|lagging|laggy|disconnecting|frozen|red)\b"
    r"|\b(?:red\s+)?(?:light|led|los(?:\s+light)?)\s+(?:is|has\s+gone|went|turned)\s+(?:off|out|green)\b"
    r"|\b(?:everything|all)\s+(?:works|is\s+working|working)\b|\beverything's\s+working\b"
    r"|\bno\s+more\s+(?:drops|buffering|lag|issues|problems|disconnections)\b|\b(?:internet|wi-?fi|connection|it)\s+(?:is\s+)?back\b",
    re.I,
)
_NOT_FIXED = re.compile(
    r"\bstill\b[^.!?]{0,20}?\b(?:not\b|n't|broken|slow|down|dropping|drops|disconnect\w*|buffer\w*|the\s+same|same|bad|lagg\w*|"
    r"no\s+internet|red|frozen|stuck|dead|off|failing|happening|an?\s+(?:issue|problem)|offline)"
    r"|(?:\b(?:not|never)|n't|\bhas\s+not|\bhave\s+not)\s+(?:been\s+)?(?:fixed|resolved|solved|sorted)\b"
    r"|(?:\b(?:did|does|has|have)\s+not|\b(?:didn't|doesn't|hasn't|haven't))\s+(?:help|work|fix|change|solve)\w*"
    r"|\bsame\s+(?:problem|issue|thing)\b|\bno\s+(?:change|difference|improvement)\b|\b(?:broken|down|slow)\s+again\b"
    r"|\bstopped\s+working\s+again\b|\bnot\s+working\s+(?:now|again)\b|\b(?:didn't|did\s+not)\s+work\b",
    re.I,
)
_STATUS = re.compile(
    r"\b(?:any|an)\s+(?:update|news|progress|eta)\b|\bstatus\b|\bupdate\s+on\b"
    r"|\bwhen\s+will\b[^.?]{0,40}?\b(?:fixed|resolved|back|come|arrive|done|working|sorted|restored|here)\b"
    r"|\bhow\s+long\b[^.?]{0,30}?\b(?:take|be|until|till)\b|\b(?:where\s+is|where's)\s+(?:the\s+|my\s+)?(?:technician|engineer|tech|ticket)\b"
    r"|\bis\s+(?:anyone|someone|somebody)\s+(?:working|looking)\s+on\b|\bwhat(?:'s|\s+is)\s+happening\s+with\b|\bfollow(?:ing)?[\s-]+up\b"
    r"|\b(?:fixed|resolved|sorted)\s+(?:it\s+)?yet\b|\bis\s+there\s+an?\s+outage\b|\bany\s+outages?\b",
    re.I,
)
_OFF_TOPIC = re.compile(
    r"\b(?:weather|forecast|recipe|cook(?:ing)?|jokes?|poem|song|lyrics|football|cricket|soccer|nba|ipl|movies?|film|stock\s+price|"
    r"share\s+price|bitcoin|crypto|homework|essay|capital\s+of|president|prime\s+minister|election|politic\w*|horoscope|zodiac|"
    r"meaning\s+of\s+life|girlfriend|boyfriend|dating|translate|who\s+won|tell\s+me\s+about\s+yourself|are\s+you\s+(?:human|a\s+bot|real|an?\s+ai)|"
    r"write\s+(?:me\s+)?(?:a|an|some)\s+(?:story|poem|essay|song|code|program|script|letter))\b",
    re.I,
)
_GREETING = re.compile(
    r"^\s*(?:hi|hello|hey|hiya|howdy|good\s+(?:morning|afternoon|evening|day)|greetings|namaste|namaskar|hola|bonjour|hallo|ciao|yo|g'day)"
    r"(?:\s+(?:there|team|all|everyone|folks|guys|support))?\s*[!.,]*\s*$",
    re.I,
)
_MOVE_WORDS = re.compile(
    r"\b(?:mov(?:e|ed|ing)\s+(?:house|home|flats?|out|in|away)|relocat\w+|new\s+address|change\s+(?:of\s+)?(?:my\s+)?address|"
    r"shift(?:ing)?\s+(?:house|home)|transfer\s+(?:my\s+)?(?:connection|service|line))\b",
    re.I,
)
_PLAN_WORDS = re.compile(
    r"\b(?:upgrade|downgrade|change\s+(?:my\s+)?plan|switch\s+plans?|plan\s+options|which\s+plans?|what\s+plans?"
    r"|plans?\s+(?:do\s+you|available)|(?:new|faster|fastest|cheaper|cheapest|better|bigger|smaller|different|another)\s+plan"
    r"|cancel\s+(?:my\s+)?(?:plan|subscription))\b",
    re.I,
)
_SOMEONE_ELSE = re.compile(
    r"\b(?:another|other|a\s+different|some\s+other)\s+(?:customer|user|subscriber|person)(?:'s|s'|s)?\b|\b(?:someone|somebody|anyone)\s+else'?s?\b"
    r"|\bwho\s+(?:else\s+)?(?:lives|live|is\s+living)\s+(?:in|at|on|near)\b|\b(?:list|show)\s+(?:me\s+)?(?:all\s+)?(?:the\s+)?(?:customers|users|subscribers)\b"
    r"|\b(?:which|what|how\s+many)\s+(?:other\s+)?customers\b",
    re.I,
)
_SOMEONE_ELSE_ASK = re.compile(
    r"(?:\b(?:his|her|their)|(?<!\w)(?!(?:it|that|what|who|there|here|name|let|today|he|she)'s)[A-Za-z]+'s)\s+"
    r"(?:(?:home|phone|mobile|email|current)\s+)?(?:address|phone|number|email|plan|account|bill|details|ticket|router|location|data|info\w*)\b"
    r"|\b(?:address|phone\s+number|number|email|plan|account|details|bill)\s+(?:of|for)\s+(?:customer\s+|mr\.?\s+|mrs\.?\s+|ms\.?\s+)?[A-Z][a-z]+",
)
_ASK_VERB = re.compile(
    r"^(?:(?:can|could|would)\s+you\s+)?(?:please\s+)?(?:tell|give|show|share|send|find|look\s+up|check|get)\b"
    r"|\b(?:i\s+(?:want|need|would\s+like|'d\s+like)\s+to\s+(?:know|see|check)|asking\s+(?:about|for)|tell\s+me|show\s+me|give\s+me)\b",
    re.I,
)


# ---------------------------------------------------------------------------------------------
# The extractor.


@dataclass
class _Found:
    facts: list[ExtractedFact] = field(default_factory=list)
    planned: list[ExtractedFact] = field(default_factory=list)
    move_said: bool = False
    plan_change_said: bool = False

    def add(self, predicate: str, obj: str | None, *, hint: str | None = None, ended: bool = False,
            planned: bool = False) -> None:
        if not obj:
            return
        fact = checked_fact(predicate, obj, hint=hint, ended=ended)
        if fact is None:
            return
        bucket = self.planned if planned else self.facts
        if len(bucket) >= MAX_FACTS:
            return
        key = (fact.predicate, name_key(fact.object), fact.ended)
        for i, f in enumerate(bucket):
            if (f.predicate, name_key(f.object), f.ended) == key:
                if fact.valid_from_hint and not f.valid_from_hint:
                    bucket[i] = fact
                return
        # the same value said to be both true and ended in one message: the later reading wins
        bucket[:] = [f for f in bucket if (f.predicate, name_key(f.object)) != (fact.predicate, name_key(fact.object))]
        bucket.append(fact)


def _hint(clause: str, symptoms: bool) -> str | None:
    """A time said in the clause, for facts; not when the clause is about a problem ("slow since
    monday" dates the problem, not the TV)."""
    if symptoms:
        return None
    m = TIME_RE.search(clause)
    return normalise(m.group(0)) if m else None


_WINDOW = 80  # how far around a match the readers look: bounded, so long messages stay linear


def _before(text: str, i: int) -> str:
    return text[max(0, i - _WINDOW) : i]


def _after(text: str, i: int) -> str:
    return text[i : i + _WINDOW]


def _has_symptom(text: str) -> bool:
    return any(kind is not IssueKind.OTHER and rx.search(text) for kind, rx in _SYMPTOMS)


class RulesExtractor:
    """The no-LLM Extractor: same port and schema as the LLM adapter will have."""

    async def extract(self, text: str, context: ExtractionContext) -> Extraction:
        return self.extract_now(text, context)

    def extract_now(self, text: str, context: ExtractionContext | None = None) -> Extraction:
        ctx = context or _EMPTY
        known = known_names(ctx.cities, ctx.plans, ctx.routers)
        body = _prepare(text)
        sentences = _sentences(body)
        found = _Found()
        for sent in sentences:
            for clause in sent.clauses:
                self._clause(known, clause, found)
        self._names(known, body, sentences, found)
        self._contact(body, sentences, found)
        problem = self._problem(known, body, sentences)
        about_else = self._someone_else(sentences)
        intent = self._intent(body, sentences, found, problem, about_else)
        return Extraction(
            facts=found.facts,
            planned=found.planned,
            problem=problem,
            intent=intent,
            about_someone_else=about_else,
            language_hint=language_hint(body),
        )

    # -- facts, one clause at a time ------------------------------------------------------------

    def _clause(self, known: Known, clause: _Clause, found: _Found) -> None:
        text = clause.text
        symptoms = _has_symptom(text)
        hint = _hint(text, symptoms)
        if _MOVE_WORDS.search(text) or _MOVING_TO.search(text):
            found.move_said = True
        if _PLAN_WORDS.search(text):
            found.plan_change_said = True
        if clause.question and (known.plans.find_all(text) or re.search(r"\b(?:plans?|mbps|gbps)\b", text, re.I)):
            found.plan_change_said = True  # "do you have Fiber 1000 in Pune?"
        if clause.conditional:
            return
        if clause.asserts:
            self._lives(known, text, hint, found)
            self._plans(known, text, hint, found)
            self._routers(known, text, hint, found)
            self._owned(known, text, hint, found)
        elif clause.request:
            self._plan_requests(known, text, hint, found)

    def _lives(self, known: Known, text: str, hint: str | None, found: _Found) -> None:
        for m in _LIVE.finditer(text):
            pre = m.group("pre")
            if not re.match(r"(?:i|we)\b", pre, re.I) and _third_party(_before(text, m.start()) + pre):
                continue
            hit = _city_at(known, text, m.end())
            if not hit:
                continue
            pre = m.group("pre").lower()
            ended = bool(re.search(r"\b(?:no\s+longer|used\s+to|not|never)\b|n't", pre)) or bool(
                _ENDED_AFTER.match(_after(text, hit[1]))
            )
            if m.group("verb").lower() in ("lived", "resided") and not re.search(r"(?:'ve|have|has|been)\s+$", pre):
                ended = True
            found.add("lives_in", hit[0], hint=hint, ended=ended)
        for rx in (_HOME_IS,):
            for m in rx.finditer(text):
                if _third_party(_before(text, m.start())):
                    continue
                hit = _city_at(known, text, m.end())
                if hit:
                    found.add("lives_in", hit[0], hint=hint)
        for m in _NOT_IN.finditer(text):
            hit = _city_at(known, text, m.end(), scan=False)
            if hit and (re.search(r"no\s+longer", m.group(0), re.I) or _ENDED_AFTER.match(_after(text, hit[1]))):
                found.add("lives_in", hit[0], hint=hint, ended=True)
        for m in _MOVED_TO.finditer(text):
            prefix = _before(text, m.start())
            if _third_party(prefix) or _NEGATED_BEFORE.search(prefix):
                continue
            hit = _city_at(known, text, m.end())
            if not hit:
                continue
            found.move_said = True
            found.add("lives_in", hit[0], hint=hint)
            back = re.match(r"\s+from\s+(?:the\s+)?", _after(text, hit[1]), re.I)
            if back:
                old = _city_at(known, text, hit[1] + back.end(), scan=False)
                if old:
                    found.add("lives_in", old[0], hint=hint, ended=True)
        for m in _MOVED_FROM.finditer(text):
            if _third_party(_before(text, m.start())) or _NEGATED_BEFORE.search(_before(text, m.start())):
                continue
            old = _city_at(known, text, m.end(), scan=False)
            if not old:
                continue
            found.move_said = True
            found.add("lives_in", old[0], hint=hint, ended=True)
            to = re.match(r"\s*(?:,\s*)?(?:to|into)\s+", _after(text, old[1]), re.I)
            if to:
                new = _city_at(known, text, old[1] + to.end())
                if new:
                    found.add("lives_in", new[0], hint=hint)
        for m in _LEFT.finditer(text):
            hit = known.cities.match_at(text, m.end())
            if hit and not _NEGATED_BEFORE.search(_before(text, m.start() + len(m.group(0)))):
                found.move_said = True
                found.add("lives_in", hit[1], hint=hint, ended=True)
        for m in _MOVING_TO.finditer(text):
            prefix = _before(text, m.start())
            if _third_party(prefix) or _NEGATED_BEFORE.search(prefix + m.group(0)[:-3]):
                continue
            hit = _city_at(known, text, m.end())
            if not hit:
                continue
            found.move_said = True
            # "after moving to Pune" happened; "moving to Pune next month" has not yet
            found.add("lives_in", hit[0], hint=hint, planned=not m.group("pre"))

    def _plans(self, known: Known, text: str, hint: str | None, found: _Found) -> None:
        taken: list[int] = []

        def take(rx: re.Pattern[str], *, ended: bool = False, planned: bool = False) -> None:
            for m in rx.finditer(text):
                if m.end() in taken or _third_party(_before(text, m.start())):
                    continue
                hit = _plan_at(known, text, m.end())
                if not hit:
                    continue
                taken.append(m.end())
                end_of_plan = hit[1]
                is_ended = ended or bool(_ENDED_AFTER.match(_after(text, end_of_plan)))
                if planned or rx is _SWITCHED_TO or rx is _SWITCHED_FROM:
                    found.plan_change_said = True
                found.add("on_plan", hit[0], hint=hint, ended=is_ended, planned=planned and not is_ended)
                if rx is _SWITCHED_FROM:
                    to = re.match(r"\s*(?:,\s*)?(?:to|onto)\s+(?:the\s+|a\s+)?", _after(text, end_of_plan), re.I)
                    if to:
                        new = _plan_at(known, text, end_of_plan + to.end())
                        if new:
                            taken.append(end_of_plan + to.end())
                            found.add("on_plan", new[0], hint=hint)

        take(_OFF_PLAN, ended=True)
        take(_SWITCHED_FROM, ended=True)
        take(_SWITCHED_TO)
        take(_WANT_PLAN, planned=True)
        take(_ON_PLAN)
        take(_PLAN_IS)
        take(_HAVE_PLAN)

    def _plan_requests(self, known: Known, text: str, hint: str | None, found: _Found) -> None:
        for m in _WANT_PLAN.finditer(text):
            hit = _plan_at(known, text, m.end())
            if hit:
                found.plan_change_said = True
                found.add("on_plan", hit[0], hint=hint, planned=True)

    def _routers(self, known: Known, text: str, hint: str | None, found: _Found) -> None:
        rep = _REPLACED.search(text)
        if rep:
            old = _router_in(known, rep.group("old"), router_word_near=True)
            new = _router_in(known, rep.group("new"), router_word_near=True)
            if old or new:
                for _, _, name in old:
                    found.add("has_router", name, hint=hint, ended=True)
                for _, _, name in new:
                    found.add("has_router", name, hint=hint)
                return
        near = bool(_ROUTER_WORD.search(text))
        for m in _ROUTER_IS.finditer(text):
            if _third_party(_before(text, m.start())) or _someone_elses(_before(text, m.start())):
                continue
            name = _router_from_phrase(known, _after(text, m.end()))
            if name:
                found.add("has_router", name, hint=None if _has_symptom(text) else hint)
        for start, _end, name in _router_in(known, text, router_word_near=near):
            prefix = _before(text, start)
            if _someone_elses(prefix):
                continue
            ended = bool(_OWNERSHIP_ENDED.search(prefix)) or bool(_ENDED_AFTER.match(_after(text, _end)))
            found.add("has_router", name, hint=hint, ended=ended)

    def _owned(self, known: Known, text: str, hint: str | None, found: _Found) -> None:
        rep = _REPLACED.search(text)
        for d in _devices_in(known, text):
            prefix = _before(text, d.start)
            if _someone_elses(prefix, household_ok=True):
                continue
            ended = bool(_OWNERSHIP_ENDED.search(prefix)) or bool(_ENDED_AFTER.match(_after(text, d.end)))
            if rep and rep.start("old") <= d.start < rep.end("old"):
                ended = True
            found.add("owns_device", d.device, hint=hint, ended=ended)

    # -- whole-message readings -----------------------------------------------------------------

    def _names(self, known: Known, body: str, sentences: list[_Sentence], found: _Found) -> None:
        for sent in sentences:
            if sent.conditional:
                continue
            for clause in sent.clauses:
                if clause.question:
                    continue
                text = clause.text
                name = None
                m = _NAME_LOOSE.search(text)
                if m:
                    name = _name_tokens(text, m.end(), strict=False)
                else:
                    for m in _NAME_STRICT.finditer(text):
                        name = _name_tokens(text, m.end(), strict=True)
                        if name:
                            break
                    if not name and (m := _NAME_BEFORE.match(text.strip())):
                        name = _name_tokens(m.group("n"), 0, strict=True)
                if name and not self._not_a_name(known, name):
                    found.add("name", name)
                    return
        m = _SIGN_OFF.search(body.strip())
        if m:
            name = _name_tokens(m.group("n"), 0, strict=True)
            if name and not self._not_a_name(known, name):
                found.add("name", name)

    @staticmethod
    def _not_a_name(known: Known, name: str) -> bool:
        key = name_key(fold_text(name))
        if key in known.city_keys or key in lx.ROUTER_BRANDS or key in lx.DEVICES or known.plans.match_at(name, 0):
            return True
        return any(w in lx.NAME_STOP for w in key.split()[:1])

    def _contact(self, body: str, sentences: list[_Sentence], found: _Found) -> None:
        preferred: str | None = None
        said: str | None = None
        for sent in sentences:
            if sent.conditional:
                continue
            # questions carry contact details only as requests ("can you call me on ...?")
            if sent.question and not sent.request:
                continue
            text = sent.text
            for m in _EMAIL.finditer(text):
                if _THIRD_PARTY_POSSESSIVE.search(text[max(0, m.start() - 40) : m.start()]):
                    continue
                found.add("email", m.group(0).rstrip("."), ended=_old_contact(text, m.start(), m.end()))
            phone_words = bool(_PHONE_CONTEXT.search(text))
            for m in _PHONE.finditer(text):
                before = text[max(0, m.start() - 40) : m.start()]
                if _THIRD_PARTY_POSSESSIVE.search(before):
                    continue
                digits = re.sub(r"\D", "", m.group(0))
                if _NOT_PHONE_CONTEXT.search(before[-25:]):
                    continue
                if re.fullmatch(r"\d{4}-\d{2}-\d{2}", m.group(0).strip()):
                    continue
                if m.group(0).startswith("+") or phone_words or len(digits) >= 10:
                    found.add("phone", m.group(0), ended=_old_contact(text, m.start(), m.end()))
            for m in _CONTACT_REFUSED.finditer(text):
                found.add("prefers_contact", "phone", ended=True)
            for rx in _CONTACT_PREFER:
                for m in rx.finditer(text):
                    if _NEGATED_BEFORE.search(_before(text, m.start())) and not re.search(r"prefer", m.group(0), re.I):
                        continue
                    preferred = preferred or _method(m.group("m"))
            for rx, method in _CONTACT_SAID:
                for m in rx.finditer(text):
                    if re.search(r"(?:\b(?:don't|do\s+not|never|not|stop|no)\s+|n't\s+)$", _before(text, m.start()), re.I):
                        continue
                    if method == "phone" and re.match(r"\s+[A-Z][a-z]", _after(text, m.end())) and not re.match(
                        r"\s+(?:on|at|back|tomorrow|today|later|after|before|between|in|when|if|anytime|any\s+time)\b",
                        _after(text, m.end()), re.I,
                    ):
                        continue  # "call me Al" is a name, not a preference
                    said = said or method
        choice = preferred or said
        if choice:
            found.add("prefers_contact", choice)

    def _problem(self, known: Known, body: str, sentences: list[_Sentence]) -> ProblemReport | None:
        kinds: list[IssueKind] = []
        where: list[_Clause] = []  # the clauses that name a symptom, in order
        for sent in sentences:
            if sent.conditional:
                continue  # "if it gets slow again ..." reports nothing
            for clause in sent.clauses:
                text = clause.text
                if _FIXED.search(text) and not _NOT_FIXED.search(text):
                    continue  # "it works now", "not slow anymore": a confirmation, not a report
                for kind, rx in _SYMPTOMS:
                    for m in rx.finditer(text):
                        before = _before(text, m.start())
                        if _NEG_SYMPTOM_BEFORE.search(before) or _ENDED_AFTER.match(_after(text, m.end())):
                            continue
                        if kind is IssueKind.OTHER and re.search(r"\bno\s+$", before, re.I):
                            continue  # "no problem"
                        if kind not in kinds:
                            kinds.append(kind)
                        if clause not in where:
                            where.append(clause)
                        break
        if not kinds:
            return None
        kinds.sort(key=_KIND_RANK.__getitem__)
        if len(kinds) > 1 and IssueKind.OTHER in kinds:
            kinds.remove(IssueKind.OTHER)
        if IssueKind.INTERMITTENT in kinds and IssueKind.WIFI_DROPS not in kinds and any(_WIFI.search(c.text) for c in where):
            kinds[kinds.index(IssueKind.INTERMITTENT)] = IssueKind.WIFI_DROPS  # "keeps disconnecting from the wifi"
            kinds.sort(key=_KIND_RANK.__getitem__)
        kind = kinds[0]
        billing = kind in (IssueKind.BILLING_DOUBLE_CHARGE, IssueKind.PAYMENT_FAILED)
        medium = None if billing else "wifi" if _WIFI.search(body) else "wired" if _WIRED.search(body) else None
        # details said with the symptom win; then details said elsewhere, except beside a move or
        # plan change ("we moved last week" dates the move, not the fault)
        others = [c for s in sentences if not s.conditional for c in s.clauses if c not in where and not (
            _MOVED_TO.search(c.text) or _SWITCHED_TO.search(c.text) or _MOVING_TO.search(c.text) or _MOVED_FROM.search(c.text))]
        place = time = device = None
        for clause in where + others:
            if place is None and (pm := _PLACE.search(clause.text)):
                place = pm.group("p").lower()
            if time is None and (tm := TIME_RE.search(clause.text)):
                time = normalise(tm.group(0))
            if device is None and (hits := _devices_in(known, clause.text)):
                device = hits[0].device
        summary = _LABELS[kind]
        if medium == "wifi" and kind in (IssueKind.SLOW_SPEED, IssueKind.NO_CONNECTION, IssueKind.INTERMITTENT):
            summary += " on Wi-Fi"
        if kind is IssueKind.OTHER:
            summary += ": " + where[0].text[:200]
        details = [d for d in (place, time, f"on the {device}" if device else None) if d]
        if details:
            summary += ", " + ", ".join(details)
        return ProblemReport(kind=kind, also=kinds[1:], medium=medium, place=place, time=time, device=device,
                             summary=summary[:300])

    def _someone_else(self, sentences: list[_Sentence]) -> bool:
        for sent in sentences:
            if _SOMEONE_ELSE.search(sent.text):
                return True
            asking = sent.question or sent.request or bool(_ASK_VERB.search(sent.text))
            if asking and _SOMEONE_ELSE_ASK.search(sent.text):
                return True
        return False

    def _intent(self, body: str, sentences: list[_Sentence], found: _Found, problem: ProblemReport | None,
                about_else: bool) -> Intent:
        not_fixed = any(_NOT_FIXED.search(s.text) and not s.conditional for s in sentences)
        fixed = any(_FIXED.search(s.text) and not s.conditional and not _NOT_FIXED.search(s.text) for s in sentences)
        # Confirmations first: "still slow upstairs" answers "is it fixed?". With no ticket awaiting
        # an answer the caller treats CONFIRM_NOT_FIXED as a report (the problem is filled in).
        if not_fixed:
            return Intent.CONFIRM_NOT_FIXED
        if fixed and not problem:
            return Intent.CONFIRM_FIXED
        asking = any(s.question or s.request for s in sentences)
        if _STATUS.search(body) and (asking or re.search(r"\b(?:update|status)\b", body, re.I)):
            return Intent.ASK_STATUS
        if problem:
            return Intent.REPORT_PROBLEM
        if about_else and not (found.facts or found.planned):
            return Intent.OTHER
        if found.move_said:
            return Intent.MOVE
        if found.plan_change_said or any(f.predicate == "on_plan" for f in found.planned):
            return Intent.PLAN_CHANGE
        if found.facts or found.planned:
            return Intent.GIVE_INFO
        if _OFF_TOPIC.search(body):
            return Intent.OFF_TOPIC
        if all(_GREETING.match(s.text) for s in sentences) and sentences:
            return Intent.GREETING
        return Intent.OTHER


def extract(text: str, context: ExtractionContext | None = None) -> Extraction:
    """The rules extractor as a plain function (what the async port method runs)."""
    return _RULES.extract_now(text, context)


_RULES = RulesExtractor()
