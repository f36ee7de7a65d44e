"""What a clause names, for the rules extractor: where the customer lives, their plan, their router
and devices, each read against the known names (gazetteer) and checked by the predicate registry."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from relay_graph.memory.entities import name_key
from relay_graph.desk.extraction import lexicon as lx
from relay_graph.desk.extraction.gazetteer import Known

# ---------------------------------------------------------------------------------------------
# Where the customer lives.

LIVE = re.compile(
    r"\b(?P<pre>(?:(?:i|we)(?:'m|'re|\s+am|\s+are)?\s+)?(?:(?:currently|now|still|also|no\s+longer|not|never|"
    r"used\s+to|don't|do\s+not|didn't|did\s+not)\s+)*(?:(?:'ve|have|has)\s+(?:been\s+)?)?)"
    r"(?P<verb>live|living|lived|reside|residing|resided|based|located|settled)\s+(?:in|at|near|out\s+of)\s+",
    re.I,
)
HOME_IS = re.compile(r"\b(?:my|our)\s+(?:new\s+|current\s+)?(?:home|house|flat|apartment|address|place)\s+(?:is\s+)?(?:in|at)\s+", re.I)
NOT_IN = re.compile(r"\b(?:i'm|i\s+am|we're|we\s+are)\s+(?:no\s+longer|not)\s+(?:living\s+|based\s+)?(?:in|at)\s+", re.I)
MOVED_TO = re.compile(
    r"\b(?:(?:have|'ve|has|had|just|recently|finally|already|now)\s+)*(?:moved|relocated|shifted)"
    r"\s+(?:(?:back|over|house|home|flat|out)\s+)?(?:to|into|in\s+to)\s+",
    re.I,
)
MOVED_FROM = re.compile(r"\b(?:moved|relocated|shifted)\s+(?:(?:away|out|house)\s+)?(?:from|out\s+of)\s+", re.I)
LEFT = re.compile(r"\b(?:i|we)\s+(?:have\s+|'ve\s+|just\s+)?left\s+", re.I)
MOVING_TO = re.compile(
    r"\b(?P<pre>(?:before|after|since)\s+)?(?:moving|relocating|shifting|(?:going|planning|plan|want|wanting|hoping|about|"
    r"intend|intending|need|have|'d\s+like|would\s+like|will|'ll|gonna|wanna|soon)\s+(?:to\s+)?(?:move|relocate|shift))"
    r"\s+(?:(?:back|over|house|home)\s+)?(?:to|into)\s+",
    re.I,
)
ENDED_AFTER = re.compile(r"^[^,;]{0,30}?\b(?:anymore|any\s+more)\b", re.I)
NEGATED_BEFORE = re.compile(r"(?:\b(?:not|never|no)\b|n't)[\w\s']{0,12}$", re.I)
_PLACE_STOP = {"the", "a", "an", "my", "our", "apartment", "flat", "house", "building", "street", "road", "tower",
               "block", "sector", "phase", "floor", "room", "home", "office", "city", "town", "village", "area",
               "india", "france", "germany", "spain", "italy", "portugal", "uk", "usa", "us", "america", "canada",
               "mexico", "brazil", "argentina", "japan", "china", "australia", "europe", "asia", "england",
               "scotland", "wales", "ireland", "netherlands", "belgium", "switzerland", "austria", "poland",
               "it", "there", "here", "this", "that", "your", "fiber", "fibre", "wifi", "internet", *lx.WEEKDAYS,
               *lx.MONTHS}
_UNKNOWN_PLACE = re.compile(r"([A-Z][\w'-]+(?:\s+(?:de|da|del|upon|on|am|sur)?\s*[A-Z][\w'-]+){0,2})")


def city_at(known: Known, text: str, pos: int, *, scan: bool = True) -> tuple[str, int] | None:
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

ON_PLAN = re.compile(
    r"\b(?:i'?m|i\s+am|we'?re|we\s+are|currently|still|now)\s+(?:(?:currently|still|now|already)\s+)?on\s+(?:the\s+|a\s+|my\s+)?",
    re.I,
)
PLAN_IS = re.compile(
    r"\b(?:my|our)\s+(?:current\s+|new\s+|internet\s+|broadband\s+)?(?:plan|package|subscription|tariff)\s+(?:is|'s)\s+(?:the\s+|a\s+)?",
    re.I,
)
HAVE_PLAN = re.compile(
    r"\b(?:i|we)\s+(?:(?:currently|still|now|already)\s+)?(?:have|'ve\s+got|got|pay\s+for|subscribe\s+to|use)\s+(?:the\s+|a\s+)?",
    re.I,
)
SWITCHED_TO = re.compile(
    r"\b(?:switched|upgraded|downgraded|changed|moved|migrated|subscribed|signed\s+up)\s+(?:(?:my\s+plan|our\s+plan|plans?)\s+)?"
    r"(?:to|for|onto|on\s+to)\s+(?:the\s+|a\s+)?",
    re.I,
)
SWITCHED_FROM = re.compile(
    r"\b(?:switched|upgraded|downgraded|changed|moved|migrated)\s+(?:(?:my\s+plan|our\s+plan|plans?)\s+)?from\s+(?:the\s+|a\s+|my\s+)?",
    re.I,
)
WANT_PLAN = re.compile(
    r"\b(?:upgrade|downgrade|switch|change|move|put|migrate|sign)\s+(?:(?:me|us|my\s+plan|our\s+plan|my\s+(?:connection|account|line)|me\s+up|us\s+up)\s+)?"
    r"(?:to|for|onto|on\s+to)\s+(?:the\s+|a\s+)?"
    r"|\b(?:want|wanna|would\s+like|'d\s+like|need|interested\s+in|get\s+me)\s+(?:to\s+(?:get|have|try|buy|take|upgrade\s+to|"
    r"switch\s+to|change\s+to|move\s+to|downgrade\s+to)\s+)?(?:the\s+|a\s+)?"
    r"|\b(?:can|could|may)\s+(?:i|we)\s+(?:get|have|switch\s+to|upgrade\s+to|move\s+to|change\s+to|downgrade\s+to)\s+(?:the\s+|a\s+)?",
    re.I,
)
OFF_PLAN = re.compile(
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


def plan_at(known: Known, text: str, pos: int) -> tuple[str, int] | None:
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

ROUTER_WORD = re.compile(rf"\b{lx.ROUTER_WORDS}\b", re.I)
ROUTER_IS = re.compile(
    r"\b(?:my|our|the)\s+(?:wi-?fi\s+)?(?:router|modem|ont|gateway)(?:\s+model)?\s+(?:is|'s)\s+(?:an?\s+|the\s+)?", re.I
)
_MODEL_CODE = re.compile(r"(?=[\w-]{0,30}[A-Za-z])(?=[\w-]{0,30}\d)[A-Za-z0-9][\w-]{0,30}")
# a model named after the maker's router: ", model JCOW414", " router (model no. F670L)"
_MODEL_AFTER = re.compile(rf"\s*(?:{lx.ROUTER_WORDS})?\s*[,(:-]?\s*(?:its\s+|it's\s+|the\s+)?(?:model|model\s+(?:no\.?|number|#))"
                          rf"\s*(?:is\s+)?[:#]?\s*(?P<code>{_MODEL_CODE.pattern})", re.I)
_BAND_TOKENS = re.compile(r"^(?:\d+(?:\.\d+)?(?:g|ghz|mbps|gbps)|wifi\d|wi-fi\d|\d+(?:st|nd|rd|th))$", re.I)
_MODEL_TOKEN = re.compile(r"[\w!+-]+")
_BLANKS = re.compile(r"[ \t]+")
SPACES = re.compile(r"\s*")
_DEVICE_AFTER = re.compile(r"^\s+(?:phone|mobile|laptop|tv|tablet|watch|speaker|earbuds|smartphone|notebook|monitor)\b", re.I)
OWNERSHIP_ENDED = re.compile(
    r"(?:\b(?:no\s+longer\s+(?:have|own|use)|got\s+rid\s+of|sold|gave\s+away|threw\s+away|returned|used\s+to\s+(?:have|own|use)"
    r"|stopped\s+using|(?:don't|do\s+not|doesn't|does\s+not|didn't|did\s+not)\s+(?:have|own|use))"
    r"\s+(?:(?:a|an|the|my|our|any|old|that)\s+){0,2})$",
    re.I,
)
REPLACED = re.compile(r"\b(?:replaced|swapped|exchanged|traded)\s+(?P<old>.+?)\s+(?:with|for)\s+(?P<new>.+)$", re.I)


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
        if ROUTER_WORD.fullmatch(tok) or not _is_model_token(tok, tok[:1].isupper()):
            break
        end = t.start() + len(tok)
        count += 1
    return end


def router_in(known: Known, text: str, *, router_word_near: bool) -> list[tuple[int, int, str]]:
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
        named = text[start:tail]
        code = _MODEL_AFTER.match(text, tail)  # "JioFiber router, model JCOW414"
        if code and not _BAND_TOKENS.match(code.group("code")):
            named, tail = f"{named} {code.group('code')}", code.end()
        found.append((start, tail, named))
        taken.append((start, tail))
    if not found:
        # no maker named: a model code just before a router word ("a G-140W-C router")
        for m in re.finditer(rf"(?P<code>{_MODEL_CODE.pattern})\s+{lx.ROUTER_WORDS}\b", text, re.I):
            if not _BAND_TOKENS.match(m.group("code")):
                found.append((m.start("code"), m.end("code"), m.group("code")))
    return found


_MODEL_SAID = re.compile(rf"\bmodel\s*(?:no\.?|number|#)?\s*(?:is\s+)?[:#]?\s*(?P<code>{_MODEL_CODE.pattern})", re.I)


def model_code_in(text: str) -> str | None:
    """A model code said on its own ("..., model JCOW414"), for the router named beside it."""
    m = _MODEL_SAID.search(text)
    return m.group("code") if m and not _BAND_TOKENS.match(m.group("code")) else None


def router_from_phrase(known: Known, phrase: str) -> str | None:
    """What follows "my router is": a model if it reads like one, else nothing ("slow", "old")."""
    phrase = re.split(r"\s+(?:and|but|which|that|so|since|because|with|from)\s+", phrase, maxsplit=1, flags=re.I)[0]
    hits = router_in(known, phrase, router_word_near=True)
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


def devices_in(known: Known, text: str) -> list[_DeviceHit]:
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


