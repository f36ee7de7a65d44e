"""What a customer's turn asks of the desk beyond its facts and its problem: the questions the
intake agent answers from the graph (plans, prices, add-ons, coverage, a recommendation, a product
we do not sell, an FAQ) and the turns about an open ticket (what to try, "it's a bit better",
"any update?", "call me before 10").

Pure and deterministic (regular expressions, no I/O): `recognise(text)` returns every Ask in the
turn, in the order the customer wrote them, each once, so a turn that carries several things gets
an answer to each. The extractor (relay_graph.desk.extraction) still reads the facts and the problem;
these are the asks it has no slot for.

| kind           | looks like                                                 | detail            |
|----------------|------------------------------------------------------------|-------------------|
| plans          | "which plans do you have", "what do they cost", "prices"   | -                 |
|                | "what would it cost per month", "a cheaper plan"           |                   |
| addons         | "what add-ons / extras", "static IP", "mesh"                | -                 |
| services       | "how much is installation / a technician visit"            | -                 |
| coverage       | "do you cover Pune?", "is fibre available in Leeds"        | the place named   |
| recommend      | "what plan for a family of four who game and stream?"      | Household         |
|                | "do you have a plan for gamers?"                            |                   |
| not_sold       | "do you sell iPhones?"                                     | the product       |
| tip            | "what should I try?", "anything I can do meanwhile?"       | -                 |
| reading        | "it's a bit better now", "worse again"                     | better / worse    |
| update         | "any update?", "any news on my ticket?", "koi update?"     | -                 |
|                | "when is the technician coming?", "is someone coming?"     |                   |
| callback       | "can someone call me before 10?", "after 5pm works best    | the time said     |
|                | for a call", "11 se pehle call kar dena"                   | ("after 19")      |
| faq            | any other question ("how do I change my wifi password?")   | the question      |
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum

__all__ = ["Ask", "AskKind", "Household", "recognise", "household_of"]


class AskKind(str, Enum):
    PLANS = "plans"
    ADDONS = "addons"
    SERVICES = "services"
    COVERAGE = "coverage"
    RECOMMEND = "recommend"
    NOT_SOLD = "not_sold"
    TIP = "tip"
    READING = "reading"
    UPDATE = "update"
    CALLBACK = "callback"
    ABOUT_ME = "about_me"  # "what do you know about me?"
    HISTORY = "history"  # "where did you have me before?", "what plan was I on in March?"
    ERASE = "erase"  # "delete my data"
    PLAN_REQUEST = "plan_request"  # "book the 300 one for me"
    FAQ = "faq"


@dataclass(frozen=True)
class Household:
    """Who shares the line and what they do on it, as the customer said (people None: not said)."""

    people: int | None = None
    uses: frozenset[str] = frozenset()  # "gaming", "streaming", "work", "uploads"
    business: str | None = None  # the business on the line, as they called it ("bakery", "office")


@dataclass(frozen=True)
class Ask:
    kind: AskKind
    detail: str | None = None  # the place, product, reading direction, time or question
    household: Household | None = None
    sentence: str = field(default="", compare=False)


_I = re.I
_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
            "ten": 10, "a couple": 2, "couple": 2, "single": 1}
_NUM = r"(?:\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten)"

_QUESTION_START = re.compile(
    r"^\s*(?:(?:and|also|so|ok|okay|btw|hi|hello|hey|please|pls)\b[\s,]*)*(?:how|what|what's|whats|which|when|where|why"
    r"|who|can|could|do|does|did|is|are|will|would|should|may|any|tell\s+me|i\s+(?:want|would\s+like)\s+to\s+know)\b", _I)
# romanised Hindi asks with no question mark ("installation charges kitna", "rate batao")
_HINGLISH_ASK = re.compile(r"\b(?:kitna|kitne|kitni|kaise|kaisa|kaun\s*sa|kab|kyun|kya|batao|bataiye|bata\s+do)\b", _I)

_PLANS = re.compile(
    r"\b(?:(?:which|what|your|the|any|all|available|internet|broadband|fib(?:re|er))\s+(?:\w+\s+)?(?:plans|packages|tariffs)"
    r"|plans?\s+(?:do|does|can)\s+you|(?:do|does)\s+you\s+(?:have|offer|sell)\s+(?:any\s+)?(?:plans|packages)"
    r"|price\s*list|pricing|prices?|how\s+much\s+(?:is|are|does|do|for)\b(?!\s+(?:my|the)\s+(?:bill|invoice))"
    r"|what\s+(?:do|does|would|will)\s+(?:it|that|they|this|the\s+plans|your\s+plans|plans)\s+cost|cost\s+(?:of|per)\s+(?:the\s+)?plans?"
    r"|(?:cost|price|pay)\s+(?:per|a|each)\s+month|monthly\s+(?:cost|price|fee|charge|rate|rent)|how\s+much\s+(?:per\s+month|a\s+month|monthly)"
    r"|(?:cheaper|cheapest|faster|fastest|bigger|smaller)\s+(?:plan|package)"
    r"|what\s+(?:does|do)\s+(?:\w+\s+)?\d{2,4}\s+cost|(?:tariff|plans?)\s+(?:and|&)\s+(?:prices?|costs?)"
    r"|(?:plans?|packages?)\s+(?:(?:ka|ki|ke)\s+)?(?:rate|daam|kimat|keemat)s?)\b", _I)
# The add-ons a question names, by offer id (catalogue.offers.ADDONS): the answer is about those
# alone. A question about add-ons names one of them or asks for the extras in general.
ADDON_NAMES = {
    "static-ip": re.compile(r"\b(?:static|fixed)\s+ip\b", _I),
    "mesh-wifi": re.compile(r"\bmesh\b", _I),
    "tv-bundle": re.compile(r"\btv\s+bundle\b", _I),
    "home-phone": re.compile(r"\b(?:home\s+phone|landline)\b", _I),
    "priority-support": re.compile(r"\bpriority\s+support\b", _I),
}
_ANY_ADDON = re.compile(r"\b(?:add-?ons?|extras)\b", _I)
_SERVICES = re.compile(r"\b(?:installation|install|technician\s+visit|router\s+replacement|relocation|moving\s+fee)\b"
                       r".{0,30}\b(?:cost|price|charge|fee|how\s+much)|\b(?:cost|price|charge|fee|how\s+much)\b.{0,30}"
                       r"\b(?:installation|install|technician\s+visit|router\s+replacement|relocation)\b", _I)
_COVERAGE = re.compile(
    r"\b(?:do|does|can)\s+(?:you|u|lanternfish)\s+(?:guys\s+|people\s+|folks\s+)?(?:also\s+)?(?:cover|serve|service|operate|work|deliver|provide\s+(?:service|internet"
    r"|fib(?:re|er))|offer\s+(?:service|internet|fib(?:re|er)))\s+(?:in\s+|at\s+|to\s+)?(?P<a>[A-Z][\w'’ -]{1,40}?)\s*(?:[?.!,]|$)"
    r"|\b(?:is|are)\s+(?:your\s+)?(?:fib(?:re|er)|internet|service|broadband|lanternfish)\s+(?:available|offered)\s+(?:in|at)\s+"
    r"(?P<b>[A-Z][\w'’ -]{1,40}?)\s*(?:[?.!,]|$)"
    r"|\b(?:coverage|service)\s+in\s+(?P<c>[A-Z][\w'’ -]{1,40}?)\s*\?"
    r"|\bis\s+(?P<d>[A-Z][\w'’ -]{1,40}?)\s+(?:covered|served)\b"
    r"|\b(?:do|does)\s+you\s+have\s+(?:service|coverage|fib(?:re|er)|lines?)\s+in\s+(?P<e>[A-Z][\w'’ -]{1,40}?)\s*(?:[?.!,]|$)",
    _I)
# "do you cover Pune also?", "Kothrud area too": words after the place that are not the place
_FILLER = re.compile(r"(?:\s+(?:also|too|as\s+well|city|area|side|region|pls|please|na|bhi|or\s+not))+$", _I)
_NOT_A_PLACE = re.compile(r"^(?:my|our|this|that|your|the|here|there|me|us|it)\b", _I)
_RECOMMEND = re.compile(
    r"\b(?:(?:what|which)\s+(?:plan|package)\s+(?:for|should|would|do\s+you\s+(?:recommend|suggest)|suits|is\s+(?:best|right|good)"
    r"|fits)|recommend\s+(?:me\s+)?(?:a\s+)?(?:plan|package)|suggest\s+(?:me\s+)?(?:a\s+)?(?:plan|package)"
    r"|best\s+plan|right\s+plan|plan\s+(?:is\s+)?(?:best|right)\s+for|plan\s+for\s+(?:a|my|our|us)\b|(?:what|which)\s+plan\s+"
    r"(?:do|would|should)\s+(?:i|we)\s+(?:need|get|take|choose|pick)"
    r"|(?:what|which)\s+(?:one\s+|plan\s+)?(?:would|will|does|might)\s+suit)", _I)
# "do you have a plan for gamers?", "is there a package good for streaming?": a recommendation when
# the sentence also says who shares the line or what they do on it (household_of)
_PLAN_FOR = re.compile(r"\b(?:do\s+you\s+(?:have|offer|sell)|is\s+there|have\s+you\s+got|got|any)\s+(?:a\s+|any\s+)?"
                       r"(?:good\s+|special\s+)?(?:plan|package|deal|something|anything)s?\s+(?:for|that\s+suits?|suited\s+to|suitable\s+for"
                       r"|made\s+for|good\s+for|meant\s+for|with)\b", _I)
_PLAN_WORD = re.compile(r"\b(?:plans?|packages?|deals?|offers?|which\s+one|what\s+one|which\s+is\s+best|kaun\s*sa)\b", _I)
_PRICE_WORDS = re.compile(r"\b(?:kitn\w*|how\s+much|price|cost|rate)\b", _I)
_NOT_SOLD_ASK = re.compile(r"\b(?:do|does|can|will)\s+(?:you|u|your\s+(?:company|shop|store))\s+(?:guys\s+)?"
                           r"(?:sell|stock|have|offer|carry|supply|do)\b|\bcan\s+i\s+buy\b|\bwhere\s+(?:can|do)\s+i\s+buy\b"
                           r"|\b(?:buy|purchase)\s+(?:an?\s+)?(?:new\s+)?\w+\s+from\s+you\b", _I)
_NOT_SOLD = re.compile(
    r"\b(?P<p>routers?|modems?|i-?phones?|i-?pads?|smart-?phones?|mobile\s+phones?|cell\s*phones?|(?<!home\s)phones?|mobiles?|android\s+phones?"
    r"|samsung\s+\w+|pixel\s+phones?|laptops?|tablets?|computers?|pcs?|macbooks?|televisions?|tvs?(?!\s+bundle)|smart\s+tvs?"
    r"|play-?stations?|ps[45]|xbox(?:es)?|consoles?|sim(?:\s+cards?)?|mobile\s+(?:plans?|data|recharge)|electricity|gas|insurance"
    r"|netflix(?:\s+subscriptions?)?|headphones|cameras?|printers?|watches|smart\s*watches?|furniture|groceries|cars?)\b", _I)
_TIP = re.compile(
    r"\bwhat\s+(?:should|can|could|shall|do)\s+i\s+(?:try|do|check)\b|\b(?:anything|something)\s+i\s+(?:can|could|should)"
    r"\s+(?:try|do|check)\b|\bany\s+(?:tips?|suggestions?|advice|ideas)\b|\bwhat\s+(?:do|can)\s+i\s+do\s+(?:now|meanwhile"
    r"|in\s+the\s+meantime)\b|\bcan\s+i\s+(?:try|do)\s+(?:anything|something)\b|\bhow\s+(?:can|do)\s+i\s+fix\s+it\b"
    r"|\bwhat\s+(?:should|can)\s+we\s+try\b|\bis\s+there\s+(?:anything|something)\s+i\s+can\s+(?:try|do)\b"
    r"|\b(?:quick\s+)?(?:fix|thing|trick)\s+(?:i|we)\s+(?:can|could)\s+(?:try|do)\b|\bkuch\s+(?:try|kar)\b", _I)
_BETTER = re.compile(
    r"\b(?:(?:it'?s|it\s+is|it\s+seems|seems|looks|feels|getting|got|a\s+(?:bit|little|lot)|slightly|somewhat|much|bit)\s+)"
    r"(?:a\s+(?:bit|little|lot)\s+|slightly\s+|somewhat\s+|much\s+)?(?:better|faster|improved|quicker)\b"
    r"|\b(?:has|have|it)\s+improved\b|\bimproving\b|\bbetter\s+now\b", _I)
_WORSE = re.compile(r"\b(?:(?:it'?s|it\s+is|getting|got|even|now)\s+)(?:a\s+(?:bit|little|lot)\s+|much\s+)?(?:worse|slower)\b"
                    r"|\bworse\s+now\b", _I)
_NOT_BETTER = re.compile(r"\b(?:not|no|isn't|is\s+not|hasn't|never)\s+(?:\w+\s+)?(?:better|improved|faster)\b", _I)
_UPDATE = re.compile(
    r"\bany\s+(?:update|updates|news|progress)\b|\b(?:what'?s|what\s+is)\s+the\s+(?:status|update|latest)\b"
    r"|\bwhere\s+(?:are\s+we|is\s+it|do\s+things\s+stand)\b|\bhow\s+(?:is|are)\s+(?:my|the)\s+(?:ticket|case|fix|repair)\b"
    r"|\b(?:is|has)\s+it\s+(?:been\s+)?(?:fixed|sorted|resolved|repaired|done)\s+yet\b|\bwhen\s+will\s+(?:it|my\s+\w+)\s+be"
    r"\s+(?:fixed|sorted|resolved|repaired|back)\b"
    r"|\bwhat'?s\s+(?:happening|going\s+on)\s+with\s+(?:my|the)\s+(?:ticket|case|connection|repair)\b"
    r"|\b(?:status|progress)\s+(?:of|on)\s+(?:my|the)\s+(?:ticket|case|complaint|request)\b|\bupdate\s+(?:me|please)\b"
    r"|\bkoi\s+(?:update|news|khabar)\b|\bkya\s+(?:hua|update|status)\b|\bhow'?s?\s+(?:is\s+)?it\s+going\s+with\s+(?:my|the)\b"
    r"|\bh(?:o)?w\s+long\s+(?:will|is|does)\s+(?:this|it|the\s+(?:fix|repair))\s+(?:going\s+to\s+)?take\b"
    r"|\b(?:a|any)\s+(?:problem|fault|outage|issue)\s+(?:in|at|near)\s+my\s+(?:area|locality|street|building)\b"
    r"|\bupdate\s+(?:do|dijiye|dena|batao)\b|\bany\s+joy\b|\b(?:being|been|getting)\s+sent\b|^\W*(?:status|update|updates)\W*$", _I)
_INSTALL = re.compile(r"\binstall", _I)  # "when can someone come to install it?": a prospect's question
# "when is the technician coming?", "technician kab aayega?", "is someone coming home?": the booked
# visit, from the ticket (never a help article about installations)
_VISIT_WHO = r"(?:technician|tech|techie|engineer|someone|somebody|anyone|anybody|any\s*one|guy|person|fitter|installer|repair\s*man)"
_VISIT = re.compile(
    rf"\b(?:when|wen|what\s+time|what\s+day|kab)\b.{{0,30}}\b{_VISIT_WHO}s?\b.{{0,25}}\b(?:com\w*|arriv\w*|show\w*\s+up"
    rf"|turn\w*\s+up|visit\w*|be\s+(?:here|there)|aa\w*|get\s+here|reach\w*)"
    rf"|\b{_VISIT_WHO}\b.{{0,20}}\bkab\b|\b(?:is|will|are)\s+(?:someone|somebody|anyone|anybody|any\s*one|a\s+tech\w*|the\s+tech\w*"
    rf"|an\s+engineer|the\s+engineer|you\s+(?:guys\s+)?sending\s+(?:someone|a\s+tech\w*))\s+(?:\w+\s+)?(?:com\w*|visiting"
    rf"|going\s+to\s+come)\b|\b(?:news|update)\s+(?:on|about)\s+(?:a|the|my)\s+(?:technician|tech|engineer|visit)\b", _I)
_CALLBACK = re.compile(
    r"\b(?:call|ring|phone)\s+(?:me|us)(?:\s+back)?\b|\bcall\s+back\b|\bcallback\b|\bgive\s+me\s+a\s+(?:call|ring)\b"
    r"|\bcall\s+(?:kar|karo|kar\s+dena|kar\s+do|kijiye|karna)\b"
    r"|\b(?:best|good|better|fine|easiest|works?|suits?)\b[^.?!]{0,20}\b(?:to\s+(?:call|ring)|for\s+(?:a\s+)?(?:call|ring))\b"
    r"|\b(?:mornings?|evenings?|afternoons?|(?:after|before)\s+\d{1,2}(?::\d{2})?\s*(?:am|pm)?)\b[^.?!]{0,20}"
    r"\b(?:work|works|suit|suits|is\s+best|are\s+best|best|good|fine)\s+(?:for\s+)?(?:me|us)\b", _I)
_BY_TIME = re.compile(r"\b(?P<w>before|by|at|around|until|till|after)\s+(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?P<ap>am|pm|a\.m\.|p\.m\.)?"
                      r"(?!\s*(?:mbps|gb|days?|%))", _I)
_HOUSEHOLD = re.compile(
    rf"\b(?:family|household|home|house|flat)\s+of\s+(?P<n>{_NUM})\b|\b(?P<m>{_NUM})\s+(?:of\s+us|people|persons|members"
    rf"|ppl|peeps|ppls|person|log|logon|log\s+hain|family\s+members|heads|users|adults|flatmates|roommates|staff|employees"
    rf"|workers|colleagues|in\s+(?:the\s+|my\s+|our\s+)?"
    rf"(?:family|house|home|flat))\b|\bwe\s*(?:are|r|re|'re|’re)\s+(?:a\s+(?:family|household)\s+of\s+)?(?P<k>{_NUM})\b"
    rf"|\b(?:household|family)\s+(?:size\s+)?(?:is\s+|of\s+)?(?P<j>{_NUM})\b|^\W*(?P<bare>{_NUM})\W*$"
    r"|\b(?P<solo>just\s+me|only\s+me|i\s+live\s+alone|living\s+alone|single\s+person)\b", _I)
_USES = {
    "gaming": re.compile(r"\b(?:gam(?:e|es|er|ers|ing)|play\s+online|ps5|xbox|fortnite|valorant)\b", _I),
    "streaming": re.compile(r"\b(?:stream(?:s|ing|ers?)?|netflix|youtube|4k|hd\s+tv|movies|watch(?:ing)?\s+tv)\b", _I),
    "work": re.compile(r"\b(?:work(?:ing)?\s+from\s+home|wfh|video\s+calls?|zoom|teams\s+calls?|remote\s+work|office\s+work)\b",
                       _I),
    "uploads": re.compile(r"\b(?:upload(?:s|ing)?|creator|content\s+creation|live\s*stream(?:ing)?\s+(?:on|to)|twitch"
                          r"|large\s+files|backups?)\b", _I),
}
_ABOUT_ME = re.compile(
    r"\bw(?:h)?at\s+(?:do|does|d)\s+(?:you|u|lanternfish|the\s+desk)\s+(?:guys\s+|lot\s+|people\s+)?(?:know|have|hold|keep|store|remember)\s+"
    r"(?:(?:on\s+file\s+)?(?:about|on|of|for)\s+me\b|on\s+file\b)|\b(?:mere|mera|meri)\s+(?:baare|bare)\s+(?:me|mein|main)\b"
    r"|\bwhat\s+did\s+i\s+tell\s+(?:you|u)\b|\b(?:which|what)\s+(?:city|town|area|address)\s+do\s+(?:you|u)\s+have\s+me\b|\bwhat\s+(?:info(?:rmation)?|data|details|personal\s+data)\s+(?:do|does)\s+(?:you|u)\s+(?:guys\s+|people\s+)?"
    r"(?:have|hold|keep|store)\b|\bwhat(?:'s|\s+is|\s+have\s+you\s+got)\s+(?:on\s+)?(?:my\s+(?:file|record|profile|account)"
    r"|on\s+file\s+(?:for|about)\s+me)\b|\bshow\s+me\s+(?:my\s+(?:data|profile|file|details|info)|what\s+you\s+(?:know|have))\b"
    r"|\bwhat\s+have\s+you\s+got\s+on\s+me\b|\b(?:do|does)\s+(?:you|u)\s+remember\s+me\b"
    r"|\bwhat\s+(?:all\s+)?(?:do\s+)?you\s+know\s+about\s+me\b", _I)
# A question about one thing on file now ("which city do you have me in?", "what plan am I on?"):
# answered with that one thing, not the whole file.
_ABOUT_ONE = re.compile(
    r"\b(?:which|what)\s+(?P<w>city|town|area|address|plan|package|router|number|phone(?:\s+number)?|email(?:\s+address)?)"
    r"\s+(?:do|have)\s+(?:you|u)\s+(?:got\s+|have\s+)?(?:me\b|for\s+me\b|on\s+(?:file|me)\b)"
    r"|\b(?:which|what)\s+(?P<p>plan|package)\s+am\s+i\s+on\b", _I)
_ONE_THING = {"city": "lives_in", "town": "lives_in", "area": "lives_in", "address": "lives_in", "plan": "on_plan",
              "package": "on_plan", "router": "has_router", "number": "phone", "phone": "phone", "email": "email"}
_BEFORE = r"(?:before|previously|earlier|in\s+the\s+past|last\s+time|originally|at\s+first|first)"
_HISTORY = re.compile(
    rf"\b(?:where|which\s+(?:city|town|place|address))\s+did\s+(?:you|u)\s+have\s+me(?:\s+in)?\b"
    rf"|\bwhere\s+(?:did|was)\s+i\s+(?:live|living|stay|staying|based)\b(?=.*\b{_BEFORE}\b)?"
    rf"|\b(?:what|which)\s+(?:plan|package|router|city|address|number|phone|email)\s+(?:was|were|did)\s+i\s+(?:on|have|in|using|use|live\s+in)\b"
    rf"|\b(?:what|which)\s+(?:was|were)\s+my\s+(?:old|previous|earlier|former|last|first)?\s*(?:plan|package|router|city|address"
    rf"|number|phone|email)\b|\bmy\s+(?:old|previous|former)\s+(?:plan|router|city|address|number)\b"
    rf"|\bdid\s+(?:you|u)\s+have\s+(?:me|my\s+(?:address|city|home|area))\b", _I)
_HISTORY_WHAT = {
    "lives_in": re.compile(r"\b(?:where|city|town|place|address|live|living|stay|staying|based)\b", _I),
    "on_plan": re.compile(r"\b(?:plan|package|tariff)\b", _I),
    "has_router": re.compile(r"\brouter\b", _I),
    "phone": re.compile(r"\b(?:number|phone)\b", _I),
    "email": re.compile(r"\bemail\b", _I),
}
_ERASE = re.compile(
    r"\b(?:delete|erase|remove|wipe|purge|destroy|clear)\s+(?:out\s+)?(?:all\s+(?:of\s+)?)?(?:my|our)\s+(?:personal\s+|private\s+"
    r"|customer\s+)?(?:data|information|info|details|records?|account|profile|history|file)\b"
    r"|\bforget\s+(?:all\s+)?(?:about\s+)?me\b|\bright\s+to\s+(?:be\s+forgotten|erasure)\b|\b(?:gdpr|dpdp)\s+(?:delete|erasure|request)\b"
    r"|\b(?:data|account)\s+(?:deletion|erasure)\b|\bmera\s+data\s+(?:delete|hata)\w*"
    r"|\b(?:delete|erase|remove|wipe)\s+(?:everything|all)\s+(?:you\s+(?:hold|have|keep|know)|about\s+me)\b"
    r"|\bmy\s+(?:personal\s+)?(?:data|information|info|details)\s+(?:deleted|erased|removed|wiped)\b", _I)
_PLAN_REQUEST = re.compile(
    r"\b(?:book|take|get|order|buy|want|choose|pick|go\s+(?:for|with)|sign\s+(?:me\s+)?up\s+(?:for|to)|upgrade\s+(?:me\s+)?(?:to)?"
    r"|downgrade\s+(?:me\s+)?(?:to)?|switch\s+(?:me\s+)?(?:to|over\s+to)|move\s+me\s+(?:to|onto)|put\s+me\s+on|i'?ll\s+(?:take|have))"
    r"\s+(?:me\s+)?(?:(?P<that>(?:that|this)\s+(?:one|plan|package|pack))|(?:the\s+|that\s+|a\s+|your\s+)?(?P<plan>(?:fib(?:re|er)\s+)?\d{2,5}(?:\s*mbps)?|(?:fib(?:re|er)\s+)?\d(?:\.\d)?\s*g(?:b|bps)?"
    r"|(?:cheapest|fastest|cheaper|faster|basic|top|biggest|smallest)|(?:fib(?:re|er)\s+)\w+)"
    r"(?:\s+(?:one|plan|package|mbps\s+plan|pack))?)\b", _I)

_SPLIT = re.compile(r"(?<=[.?!;])\s+|\n+|(?<!you)(?<!\bu)(?<!guys)(?<!people)(?<!folks)\s+(?:and\s+)?also\s+|,?\s+and\s+(?=(?:do|does|can|what|which|how|any|is|are|will)\b)",
                    _I)


def _number(word: str) -> int | None:
    w = word.lower()
    if w.isdigit():
        return int(w)
    return _NUMBERS.get(w)


_ME = re.compile(r"\b(?:me|myself|i)\b", _I)
_PARTNER = re.compile(r"\b(?:wife|husband|partner|spouse|gf|bf|girlfriend|boyfriend|hubby|missus)\b", _I)
_KIDS = re.compile(rf"\b(?P<n>{_NUM}|a)\s+(?:kids|children|sons|daughters|teens|teenagers|boys|girls|kid|child|son"
                   r"|daughter)\b", _I)
_PARENTS = re.compile(r"\b(?:my\s+)?(?:parents|in-?laws)\b", _I)


def _counted(text: str) -> int | None:
    """"me, my wife and 2 kids": the people named, counted (None: nobody counted)."""
    kids = sum(_number(k.group("n")) or 1 for k in _KIDS.finditer(text))
    partner = 1 if _PARTNER.search(text) else 0
    parents = 2 if _PARENTS.search(text) else 0
    if not (kids or partner or parents):
        return None
    return 1 + kids + partner + parents if (_ME.search(text) or partner) else None


# a business on the line ("a plan for a small bakery", "we run a cafe"): the recommendation is for it, not a home
_BUSINESS = re.compile(
    r"\b(?:for|run|have|own)\s+(?:a|an|my|our|the)\s+(?:(?:small|little|tiny|new|local|family|busy)\s+)?"
    r"(?P<b>business|shop|store|bakery|caf[eé]|coffee\s+shop|restaurant|office|salon|clinic|studio|boutique|pharmacy"
    r"|workshop|pub|hotel|guest\s*house)\b", _I)


def household_of(text: str) -> Household:
    """How many share the line and what they do on it ("a family of four who game and stream")."""
    people = None
    m = _HOUSEHOLD.search(text)
    if m:
        if m.group("solo"):
            people = 1
        else:
            people = _number(m.group("n") or m.group("m") or m.group("k") or m.group("j") or m.group("bare") or "")
    else:
        people = _counted(text)
    uses = frozenset(u for u, rx in _USES.items() if rx.search(text))
    b = _BUSINESS.search(text)
    business = re.sub(r"\s+", " ", b.group("b").lower()).replace("cafe", "café") if b else None
    return Household(people=people if people and 0 < people <= 20 else None, uses=uses, business=business)


def _is_question(sentence: str) -> bool:
    return (sentence.rstrip().endswith("?") or bool(_QUESTION_START.match(sentence))
            or bool(_HINGLISH_ASK.search(sentence)))


def _place(m: re.Match[str]) -> str:
    for g in "abcde":
        if m.group(g):
            place = _FILLER.sub("", m.group(g).strip(" -'’")).strip(" -'’")
            return "" if _NOT_A_PLACE.match(place) else place
    return ""


def _sentence_asks(s: str) -> list[Ask]:
    out: list[Ask] = []
    question = _is_question(s)
    household = household_of(s)
    said_who = bool(household.people or household.uses or household.business)
    if _RECOMMEND.search(s) or (said_who and (_PLAN_FOR.search(s) or (question and _PLAN_WORD.search(s))
                                              or re.search(r"\bwhich\s+one\b", s, _I))):
        out.append(Ask(AskKind.RECOMMEND, household=household, sentence=s))
    m = _COVERAGE.search(s)
    if m:
        out.append(Ask(AskKind.COVERAGE, _place(m) or None, sentence=s))
    if _NOT_SOLD_ASK.search(s):
        p = _NOT_SOLD.search(s)
        if p and re.match(r"(?i)(?:router|modem)", p.group("p")) and not re.search(r"(?i)\b(?:sell|buy|purchase|stock)", s):
            p = None  # "do you have anything for my router?" is a question about theirs
        if p:
            out.append(Ask(AskKind.NOT_SOLD, p.group("p"), sentence=s))
    if question and not any(a.kind is AskKind.RECOMMEND for a in out):
        if _SERVICES.search(s):
            out.append(Ask(AskKind.SERVICES, sentence=s))
        elif (named := [offer for offer, rx in ADDON_NAMES.items() if rx.search(s)]) or _ANY_ADDON.search(s):
            out.append(Ask(AskKind.ADDONS, detail=",".join(named) or None, sentence=s))
        elif _PLANS.search(s):
            out.append(Ask(AskKind.PLANS, sentence=s))
    if _TIP.search(s):
        out.append(Ask(AskKind.TIP, sentence=s))
    if _UPDATE.search(s) or (_VISIT.search(s) and not _INSTALL.search(s) and not _PRICE_WORDS.search(s)):
        out.append(Ask(AskKind.UPDATE, sentence=s))
    if not _NOT_BETTER.search(s):
        if _BETTER.search(s):
            out.append(Ask(AskKind.READING, "better", sentence=s))
        elif _WORSE.search(s):
            out.append(Ask(AskKind.READING, "worse", sentence=s))
    out += _memory_asks(s)
    if _CALLBACK.search(s):
        out.append(Ask(AskKind.CALLBACK, _call_time(s), sentence=s))
    if not out and question and not _PLEA.match(s):
        out.append(Ask(AskKind.FAQ, s.strip(), sentence=s))
    return out


# A plea for help that names nothing ("Can you help?", "please help me"): no question for the help
# articles (the best match would be an article about reaching us); the rest of the turn says what
# the help is for, or the desk asks.
_PLEA = re.compile(
    r"^\W*(?:hi|hello|hey)?\W*(?:(?:can|could|will|would)\s+(?:you|u|someone|anyone|somebody)\s+(?:please\s+|pls\s+)?help"
    r"|(?:please|pls|plz)\s+help|help)(?:\s+(?:me|us))?(?:\s+(?:with\s+(?:this|that|it)|out|here|please|pls|asap))*"
    r"\W*$", _I)


_HINDI_BEFORE = re.compile(r"\b(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?:baje\s+)?se\s+pehle\b", _I)
_LATE = re.compile(r"\b(?:evenings?|tonight|night|shaam|raat)\b", _I)


def _call_time(s: str) -> str | None:
    """The time a callback is asked for, as "before 10", "after 19:00" (an evening's "after 7" is
    19:00; "11 se pehle" is before 11), else None."""
    t = _BY_TIME.search(s)
    if t:
        word, h, m, ap = t.group("w").lower(), int(t.group("h")), t.group("m"), (t.group("ap") or "")
        if ap or h >= 12 or not _LATE.search(s):
            return t.group(0).strip()
    else:
        t = _HINDI_BEFORE.search(s)
        if not t:
            return None
        word, h, m, ap = "before", int(t.group("h")), t.group("m"), ""
    if not ap and h < 12 and _LATE.search(s):
        h += 12
    return f"{word} {h}" + (f":{m}" if m else "") + (f" {ap}" if ap else "")


def _memory_asks(s: str) -> list[Ask]:
    """What they ask of their own file: what is on it, what it said before, to erase it, and a plan
    they want (its words: the number or name they gave)."""
    out: list[Ask] = []
    if _ERASE.search(s):
        out.append(Ask(AskKind.ERASE, sentence=s))
    elif (one := _ABOUT_ONE.search(s)) and not re.search(rf"\b{_BEFORE}\b", s, _I):
        out.append(Ask(AskKind.ABOUT_ME, _ONE_THING[(one.group("w") or one.group("p")).split()[0].lower()], sentence=s))
    elif one:  # "which city do you have me in before?": what the file said before
        out.append(Ask(AskKind.HISTORY, _ONE_THING[(one.group("w") or one.group("p")).split()[0].lower()], sentence=s))
    elif _ABOUT_ME.search(s):
        out.append(Ask(AskKind.ABOUT_ME, sentence=s))
    elif _HISTORY.search(s):
        what = next((p for p, rx in _HISTORY_WHAT.items() if rx.search(s)), "lives_in")
        out.append(Ask(AskKind.HISTORY, what, sentence=s))
    m = _PLAN_REQUEST.search(s)
    if m and not _is_question(s[:m.start()] or "x"):
        out.append(Ask(AskKind.PLAN_REQUEST, (m.group("plan") or "that one").strip(), sentence=s))
    return out


def recognise(text: str) -> list[Ask]:
    """Every ask in the turn, in the customer's order, each kind once (the first wording wins;
    multi-line turns split on their lines)."""
    if not isinstance(text, str):
        return []
    asks: list[Ask] = []
    seen: set[AskKind] = set()
    for s in (p.strip() for p in _SPLIT.split(text)):
        if not s:
            continue
        for a in _sentence_asks(s):
            if a.kind not in seen:
                seen.add(a.kind)
                asks.append(a)
    whole = household_of(text)
    if (whole.people or whole.uses or whole.business) and AskKind.RECOMMEND not in seen:
        # "we are 3, husband games. which one?": the plan question of the turn is a recommendation
        asks = [Ask(AskKind.RECOMMEND, sentence=a.sentence) if a.kind is AskKind.FAQ and _PLAN_WORD.search(a.sentence)
                else a for a in asks]
        seen = {a.kind for a in asks}
    asks = [Ask(a.kind, a.detail, _merged(a.household, whole), a.sentence) if a.kind is AskKind.RECOMMEND else a
            for a in asks]
    if AskKind.RECOMMEND in seen:
        # "a plan for ... and what does it cost": the recommendation carries the price
        asks = [a for a in asks if a.kind is not AskKind.PLANS
                and not (a.kind is AskKind.FAQ and _PRICE_WORDS.search(a.sentence))]
    return asks


def _merged(said: Household | None, whole: Household) -> Household:
    """A recommendation's household: the sentence's, filled in from the rest of the turn ("we r 4
    ppl at home, 2 kids game. which plan is best for us")."""
    said = said or Household()
    return Household(people=said.people or whole.people, uses=said.uses | whole.uses,
                     business=said.business or whole.business)


def callback_due(detail: str | None) -> tuple[int, int] | None:
    """(hour, minute) of "before 10", "by 6pm", "at 17:30" (24-hour clock), else None."""
    if not detail:
        return None
    m = _BY_TIME.search(detail)
    if not m:
        return None
    hour, minute = int(m.group("h")), int(m.group("m") or 0)
    ap = (m.group("ap") or "").lower().replace(".", "")
    if ap == "pm" and hour < 12:
        hour += 12
    elif ap == "am" and hour == 12:
        hour = 0
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        return None
    return hour, minute
