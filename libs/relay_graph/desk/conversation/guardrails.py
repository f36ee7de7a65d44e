"""Staying on the job: what kind of message a customer sent, decided before the agent acts.

Deterministic (regular expressions and word lists, no LLM), so the same message always gets the
same behaviour, with or without a key. `assess(text, customer=...)` returns a Guard: the kind, the
action, the fixed reply to send (if any) and the text the agent should carry on with.

| kind                | what it looks like                                    | action       | reply_key           |
|---------------------|-------------------------------------------------------|--------------|---------------------|
| prompt_injection    | "ignore all previous instructions", "you are now ...",| fixed_reply  | prompt_injection    |
|                     | "system prompt", "reveal your instructions", Cypher   |              |                     |
| authority_claim     | claims a badge or a title (police, court, lawyer,     | fixed_reply  | authority_claim     |
|                     | staff, admin) AND asks for someone's details/address  |              |                     |
| other_customer_data | asks for another person's address, number, plan,      | fixed_reply  | other_customer      |
|                     | account ("what is Priya's address", "list customers") |              |                     |
| abuse               | threats ("I will kill you ...")                       | fixed_reply  | abuse               |
| abuse               | insults aimed at the desk                             | fixed_reply* | abuse               |
| off_topic           | weather, poems, homework, recipes, sport, ...         | fixed_reply* | off_topic           |
| joke                | asks for a joke, banter, "knock knock", "lol"         | fixed_reply* | joke                |
| mixed_language      | Hindi or Tamil in Latin letters with English          | understand   | -                   |
| on_topic            | anything else                                         | carry_on     | -                   |

Precedence is the table's order: an injection attempt, a request for someone else's data or a
threat gets its fixed reply even when the message also reports a fault (carrying on could leak,
obey it, or reward it). *Insults, jokes and off-topic requests are harmless: when the same
message also asks something of the desk (a fault, a move, a plan, a status question, details to
file), the action becomes carry_on so the customer is helped and the rest is ignored; abuse and
joke keep their kind (for logs and metrics), an incidental off-topic word ("the storm knocked my
internet out") makes the message on_topic. A mixed-language
message is rewritten in English first (`normalise_mixed_language`) and every check runs on
both texts; `Guard.text` is what the agent carries on with.

- carry_on: run the desk as usual on `Guard.text`.
- understand: the same, on the English rewrite in `Guard.text`.
- fixed_reply: send `fixed_reply(guard)` and nothing else: no tool, no graph read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from relay_graph.memory.entities import name_key
from relay_graph.runtime.errors import InvalidInput
from relay_graph.desk.extraction import lexicon as lx
from relay_graph.desk.conversation import templates as replies
from relay_graph.desk.conversation.templates import Reply
from relay_graph.desk.extraction.romanised import detect as detect_romanised
from relay_graph.desk.extraction.romanised import normalise_mixed_language
from relay_graph.desk.extraction.rules import extract
from relay_graph.desk.extraction.schema import Intent

__all__ = ["Guard", "GuardAction", "GuardKind", "GUARD_TABLE", "assess", "fixed_reply", "normalise_mixed_language"]


class GuardKind(str, Enum):
    ON_TOPIC = "on_topic"
    OFF_TOPIC = "off_topic"
    JOKE = "joke"
    PROMPT_INJECTION = "prompt_injection"
    OTHER_CUSTOMER_DATA = "other_customer_data"
    AUTHORITY_CLAIM = "authority_claim"
    ABUSE = "abuse"
    MIXED_LANGUAGE = "mixed_language"
    BREAK_IN = "break_in"  # getting into networks, devices or accounts that are not theirs


class GuardAction(str, Enum):
    CARRY_ON = "carry_on"  # help with the connection, as usual
    FIXED_REPLY = "fixed_reply"  # a fixed, templated reply (a refusal, or a light steer back); nothing else runs
    UNDERSTAND = "understand"  # rewrite in English, then carry on


@dataclass(frozen=True)
class Guard:
    kind: GuardKind
    action: GuardAction
    reply_key: str | None
    text: str  # what the agent carries on with: the message, or its English rewrite
    reason: str = ""  # which rule decided, for logs


# kind -> (action alone, action when the message also asks something of the desk, reply key)
GUARD_TABLE: dict[GuardKind, tuple[GuardAction, GuardAction, str | None]] = {
    GuardKind.PROMPT_INJECTION: (GuardAction.FIXED_REPLY, GuardAction.FIXED_REPLY, "prompt_injection"),
    GuardKind.AUTHORITY_CLAIM: (GuardAction.FIXED_REPLY, GuardAction.FIXED_REPLY, "authority_claim"),
    GuardKind.BREAK_IN: (GuardAction.FIXED_REPLY, GuardAction.FIXED_REPLY, "break_in"),
    GuardKind.OTHER_CUSTOMER_DATA: (GuardAction.FIXED_REPLY, GuardAction.FIXED_REPLY, "other_customer"),
    GuardKind.ABUSE: (GuardAction.FIXED_REPLY, GuardAction.CARRY_ON, "abuse"),
    GuardKind.OFF_TOPIC: (GuardAction.FIXED_REPLY, GuardAction.CARRY_ON, "off_topic"),
    GuardKind.JOKE: (GuardAction.FIXED_REPLY, GuardAction.CARRY_ON, "joke"),
    GuardKind.MIXED_LANGUAGE: (GuardAction.UNDERSTAND, GuardAction.UNDERSTAND, None),
    GuardKind.ON_TOPIC: (GuardAction.CARRY_ON, GuardAction.CARRY_ON, None),
}

_REPLIES: dict[str, Reply] = {
    "prompt_injection": Reply(
        "I can't change how I work or share my instructions. I am here to help with your internet "
        "service: tell me what is going on with your connection, plan or bill and I will take it from there.", []),
    "authority_claim": Reply(
        "I am sorry, I cannot share anything about any customer in this chat, whoever is asking. The police, "
        "courts and other authorities must send an official written request to our legal team, who answer it "
        "under the law. If there is something about your own service, I am happy to help.", []),
    "other_customer": replies.refuse_other_customer(),
    "break_in": Reply(
        "I can't help with getting into a network, router, device or account that isn't yours: that is against "
        "the law and our terms. If you need internet at home, I can tell you about our plans; if it is your own "
        "Wi-Fi password you have lost, it is printed on the sticker under your router.", []),
    "abuse": Reply(
        "I am sorry this has been so frustrating, and I want to put it right. Please keep it respectful. "
        "What is going wrong with your service? Tell me and I will look into it straight away.", []),
    "off_topic": replies.refuse_off_topic(),
    "joke": Reply(
        "Ha, I'd tell you a joke about Wi-Fi, but you might not get the connection. Jokes aside, I am here "
        "for your internet service: is everything working as it should?", []),
}


def fixed_reply(guard: Guard) -> Reply | None:
    """The fixed reply for a guard whose action is fixed_reply (None otherwise)."""
    if guard.action is not GuardAction.FIXED_REPLY or guard.reply_key is None:
        return None
    return _REPLIES[guard.reply_key]


# ---------------------------------------------------------------------------------------------
# Detectors. Each takes the message (and, for mixed language, its English rewrite).

_I = re.I

# Breaking into what is someone else's: a verb of breaking in near a network, device or account
# that is not theirs ("how do i hack my neighbours wifi", "crack the wifi password next door",
# "get into my ex's instagram"). One's own lost password is not this.
_BREAK_VERB = (r"(?:hack(?:ing|ed)?|crack(?:ing)?|brute[- ]?forc\w*|break\s+into|get\s+into|log\s*in(?:to)?"
               r"|steal|spy\s+on|sniff|bypass)")
# Verbs anyone uses of their own things ("we use their router": the provider's) count only with
# someone else named as the owner.
_USE_VERB = r"(?:use|access|get\s+on(?:to)?|piggyback\s+on)"
_OTHERS = (r"(?:my\s+)?(?:neighbou?r'?s?|neighbou?rs'|someone(?:\s+else)?'?s?|somebody'?s?|other\s+people'?s?|my\s+ex'?s?"
           r"|a\s+stranger'?s?|the\s+building'?s?|next\s+door(?:'s)?)")
_NOT_MINE = rf"(?:(?:{_OTHERS}|their|his|her)\s+)"
_BREAK_IN = [
    re.compile(rf"\b{_BREAK_VERB}\s+(?:in(?:to)?\s+)?(?:the\s+)?{_NOT_MINE}(?:\w+\s+){{0,2}}(?:wi-?fi|network|router|password"
               r"|account|phone|email|instagram|facebook|whatsapp|cctv|camera|hotspot|internet|connection)\b", _I),
    re.compile(rf"\b{_USE_VERB}\s+(?:the\s+)?{_OTHERS}\s+(?:\w+\s+){{0,2}}(?:wi-?fi|network|router|internet|connection"
               r"|hotspot|account)\b", _I),
    re.compile(r"\b(?:hack|crack|brute[- ]?force)\w*\s+(?:a\s+|any\s+|the\s+)?(?:wi-?fi|wpa2?|wep|network|router)"
               r"(?:\s+password)?s?\b", _I),
    re.compile(r"\b(?:wi-?fi|wpa2?|router)\s+(?:password\s+)?(?:hack|crack)\w*\b", _I),
    re.compile(r"\bfree\s+(?:wi-?fi|internet)\s+from\s+(?:my\s+)?neighbou?rs?\b", _I),
]

_INJECTION = [
    re.compile(r"\b(?:ignore|disregard|forget|skip|bypass|override|drop|delete|erase)\s+(?:all\s+|any\s+|the\s+|your\s+"
               r"|of\s+|every\s+|these\s+|those\s+|my\s+)*(?:previous|prior|above|earlier|preceding|former|original|initial"
               r"|system|existing|old|current|safety)?\s*(?:instructions?|prompts?|rules|directions|guidelines|guardrails"
               r"|restrictions|constraints|programming|directives|policies|filters)\b", _I),
    re.compile(r"\b(?:ignore|disregard|forget)\s+(?:all\s+|everything\s+)?(?:the\s+|that\s+)?(?:above|before\s+this"
               r"|you\s+(?:were|have\s+been)\s+told)\b", _I),
    re.compile(r"\byou\s+are\s+now\b|\byou're\s+now\b|\bfrom\s+now\s+on,?\s+you\s+(?:are|will|must|shall|should)\b", _I),
    re.compile(r"\bsystem\s+(?:prompt|message|instructions?)\b|\bsystem-prompt\b", _I),
    re.compile(r"\b(?:reveal|show|print|repeat|display|dump|leak|output|paste|share|tell\s+me|give\s+me)\s+(?:me\s+|us\s+)?"
               r"(?:(?:all\s+)?your\s+(?:initial\s+|hidden\s+|secret\s+|original\s+|internal\s+|full\s+|exact\s+)*"
               r"(?:instructions|prompt|rules|guidelines|configuration|config|training\s+data)"
               r"|the\s+(?:initial\s+|hidden\s+|secret\s+|original\s+|internal\s+|full\s+|exact\s+)*(?:instructions|prompt)"
               r"\s+(?:you|that\s+you|given))\b"
               r"|\bwhat\s+(?:is|are|were)\s+your\s+(?:initial\s+|hidden\s+|secret\s+|original\s+|internal\s+|exact\s+)*"
               r"(?:instructions|prompt|configuration)\b", _I),
    # the same in romanised Hindi word order: "saare instructions ignore karo"
    re.compile(r"\b(?:instructions?|rules|prompt)\s+(?:ko\s+)?(?:ignore|bhool|bhul|bhulo)\s+(?:karo|kar\s+do|jao|ja|do)\b", _I),
    re.compile(r"\b(?:developer|debug|god|admin|sudo|unrestricted|jailbreak|dan)\s+mode\b|\bjailbr[eo]a?k\w*\b", _I),
    re.compile(r"\bpretend\s+(?:to\s+be|you\s+are|you're|that\s+you)\b|\b(?:roleplay|role-play)\s+as\b", _I),
    re.compile(r"\byou\s+(?:should|must|will|can|are\s+to)?\s*(?:act|behave)\s+as\b|(?:^|[.!?]\s+)(?:please\s+)?"
               r"(?:act|behave)\s+as\b", _I),
    re.compile(r"\bnew\s+(?:instructions?|rules|task)\s*:|(?:^|\n)\s*(?:#{1,}\s*)?(?:system|assistant|developer)\s*:"
               r"|<\s*/?\s*(?:system|instructions?|im_start|im_end)\s*>|\[\s*/?\s*(?:system|INST)\s*\]", _I),
    # queries typed into the chat: the desk never runs them, and whoever sends them is not asking for help
    re.compile(r"\bMATCH\s*\(\s*\w*\s*[:)]|\bDETACH\s+DELETE\b|\bGRAPH\.(?:QUERY|RO_QUERY|DELETE|LIST)\b|\bCALL\s+db\.\w"
               r"|\bDROP\s+(?:TABLE|GRAPH|DATABASE|INDEX)\b|\bUNION\s+(?:ALL\s+)?SELECT\b|\bSELECT\s+\*\s+FROM\b|'\s*OR\s+'?1'?\s*=\s*'?1"
               r"|;\s*--", _I),
    re.compile(r"\b(?:run|execute|exec|eval)\s+(?:this|the\s+following|these|a|my)\s+(?:query|queries|cypher|sql|command"
               r"|commands|code|script)\b", _I),
]

_DATA = (r"(?:(?:home|current|new|old|postal|billing|mobile|phone|cell|contact|email|e-mail|account|personal|full|bank"
         r"|card|wifi|wi-fi)\s+)*(?:address|addresses|phone(?:\s+number)?|mobile(?:\s+number)?|number|email|e-mail|"
         r"contact(?:\s+(?:details|info|information|number))?|details|account(?:\s+(?:details|number|info))?|plan|bill|"
         r"invoice|location|password|ticket|tickets|data|info|information|records?|identity|ip(?:\s+address)?"
         r"|call\s+records|usage|history|whereabouts)")
# an ask aimed at the desk, earlier in the same sentence
_ASK_BEFORE = re.compile(
    r"\b(?:what|what's|whats|where|where's|which|who|whose|tell|give|share|show|send|find|look\s+up|lookup|get|fetch"
    r"|check|provide|reveal|disclose|pull\s+up|can\s+i\s+(?:have|get|see|know)|may\s+i\s+(?:have|get|see|know)"
    r"|let\s+me\s+(?:have|see|know)|i\s+(?:need|want)|need\s+to\s+know|want\s+to\s+know|batao|bataiye|sollunga)\b",
    _I,
)
_HOUSEHOLD = {"kid", "kids", "son", "sons", "daughter", "daughters", "child", "children", "family", "baby"}
_NOT_A_PERSON = {"it", "that", "what", "who", "there", "here", "let", "today", "he", "she", "one", "everyone",
                 "everybody", "anyone", "nobody", "this", "the", "where", "how", "why", "when", "internet", "router",
                 "wifi", "company", "relay", "tomorrow", "yesterday", "tonight", "world", "year", "month", "week",
                 "day", "provider", "isp", "plan", "god", "my", "our", "your", "customer", "modem", "connection",
                 "service", "network", "bill", "account", "ticket", "line", "fibre", "fiber", "s"} | set(lx.WEEKDAYS) | set(
                     lx.MONTHS)
_CITY_KEYS = {name_key(c) for c in lx.CITIES} | {name_key(a) for al in lx.CITIES.values() for a in al}
_POSSESSIVE = re.compile(rf"(?<![\w'’])(?P<who>[A-Za-z][A-Za-z-]*)(?:'s|s'|’s|s’)\s+{_DATA}\b", _I)
_PRONOUN_DATA = re.compile(rf"\b(?:his|her|their)\s+{_DATA}\b", _I)
_DATA_OF = re.compile(
    rf"\b{_DATA}\s+(?:of|for|belonging\s+to|registered\s+to)\s+(?:the\s+)?(?P<who>(?:customer|user|subscriber|client"
    r"|account\s+holder|mr\.?|mrs\.?|ms\.?|miss|dr\.?)\s+\S+|(?:my|our)\s+(?:neighbou?r|landlord|tenant|flatmate|roommate"
    r"|friend|colleague|ex|boss|brother|sister|mother|father|wife|husband|partner)\w*|someone(?:\s+else)?|somebody(?:\s+else)?"
    r"|another\s+\w+|other\s+\w+|(?:this|that)\s+(?:number|person|guy|man|woman|lady|customer|user|family)|the\s+(?:man|woman"
    r"|guy|lady|person|people|family)\b|[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?|\+?\d[\d\s-]{6,})",
)
_OTHERS_ASK = [
    re.compile(r"\bwho\s+(?:else\s+)?(?:lives|stays|is\s+living|resides|is\s+staying)\s+(?:at|in|on|near|next\s+door)\b", _I),
    re.compile(r"\bwhere\s+(?:does|do|did)\s+(?!i\b|we\b|you\b)(?:my\s+)?\w+\s+(?:live|stay)\b", _I),
    re.compile(r"\b(?:list|show|give|tell|send|share|find)\s+(?:me\s+)?(?:all\s+|every\s+)?(?:the\s+|your\s+|other\s+)*"
               r"(?:customers|users|subscribers|clients|accounts|people\s+(?:in|on|at|who))\b", _I),
    re.compile(r"\b(?:which|what)\s+(?:other\s+)?(?:customers|users|subscribers|clients|people)\s+(?:live|are|have|in|on|at"
               r"|use|near)\b", _I),
    re.compile(r"\b(?:another|other|a\s+different|some\s+other)\s+(?:customer|user|subscriber|person|client)(?:'s|s'|s)?\b"
               rf".{{0,40}}\b{_DATA}\b|\b{_DATA}\b.{{0,40}}\b(?:another|other|a\s+different)\s+(?:customer|user|subscriber"
               r"|person|client)\b", _I),
    re.compile(r"\b(?:someone|somebody|anyone)\s+else'?s?\b", _I),
    re.compile(rf"\b(?:a|any|some|the|that|this|one)\s+(?:customer|subscriber|user|client)(?:'s|’s|s')\s+{_DATA}\b", _I),
    re.compile(r"\bwho\s+(?:owns|has|uses|is\s+on|is\s+behind)\s+(?:this|that|the)?\s*(?:number|phone|email|account|ip"
               r"|connection)\b", _I),
    re.compile(r"\b(?:customer|subscriber)\s+(?:details|data|records?|info|information|list|database)\b", _I),
    re.compile(r"\b(?:is|are|does|do|did|has|have)\s+(?:my|our|the)\s+(?:neighbou?r|landlord|flatmate|roommate|tenant|friend"
               r"|colleague)s?\s+(?:on|have|has|got|using|use|uses|paying|pay|pays|live|living|with)\b[^.!?]*\?", _I),
    re.compile(r"\b(?:what|which)\s+(?:plan|router|package|bill|address|number|email|speed|phone)\s+(?:is|does|did|has)"
               r"\s+(?:he|she|they|(?:my|our|the)\s+(?:neighbou?r|landlord|flatmate|roommate|tenant|friend|colleague)s?)\b", _I),
]

_AUTHORITY = re.compile(
    r"\b(?:i\s*(?:am|'m|m)|this\s+is|we\s+are|we're|speaking\s+as|calling\s+(?:from|as)|writing\s+(?:from|as)|on\s+behalf\s+of"
    r"|(?:^|[,.;]\s*)as)"
    r"\s+(?:an?\s+|the\s+|from\s+(?:the\s+)?|with\s+(?:the\s+)?|officer\s+|your\s+)?(?:senior\s+|chief\s+|head\s+|local\s+"
    r"|assistant\s+|deputy\s+|sub[-\s]?)?(?:police|cop|officer|inspector|detective|constable|investigator|agent|fbi|cbi"
    r"|interpol|cyber\s*(?:cell|crime|police)|crime\s+branch|lawyer|advocate|attorney|solicitor|barrister|judge|magistrate"
    r"|court|government|govt|official|authorit(?:y|ies)|tax\s+(?:officer|department)|income\s+tax|intelligence|military"
    r"|army|ministry|department|dot\b|trai\b|telecom\s+(?:department|authority)|regulator|relay\s+(?:staff|employee|engineer"
    r"|admin|support|management|hq)|manager|supervisor|admin(?:istrator)?|ceo|cto|owner\s+of|staff|employee|engineer|technician"
    r"|head\s+office|headquarters|security\s+team|fraud\s+team|legal\s+team|compliance)",
    _I,
)
_LEGAL = re.compile(r"\b(?:court\s+order|warrant|subpoena|official\s+investigation|legal\s+(?:notice|request|order)"
                    r"|law\s+enforcement|by\s+order\s+of|under\s+section\s+\d+|fir\s+(?:no|number)|case\s+is\s+registered)\b", _I)
# what an authority claim asks for: someone's details, never "my ..."
_DATA_ASK = re.compile(
    r"\b(?:address|addresses|location|whereabouts|identity|details|name|names|phone\s+number|mobile\s+number|call\s+records"
    r"|ip\s+address|kyc|records|subscriber\s+\w+|customer\s+\w+)\s+(?:of|for|behind|using|linked\s+to|registered\s+to"
    r"|belonging\s+to|on)\s+(?!my\b|our\b|me\b|us\b|file\b)"
    r"|\b(?:subscriber|customer|user)\s+(?:details|data|records?|information|info|address|identity)\b"
    r"|\bwho\s+(?:owns|uses|is\s+behind|lives\s+at)\b|\b(?:his|her|their)\s+(?:address|location|number|details)\b"
    r"|\b(?:a|any|some|the|that|this|one)\s+(?:customer|subscriber|user|client)(?:'s|’s|s')\s+\w+",
    _I,
)

_ABUSE = [
    re.compile(r"\byou(?:\s+guys|\s+people|\s+lot|\s+all)?(?:'re|\s+are|r|\s+r|re)?\s+(?:such\s+an?\s+|an?\s+|a\s+complete\s+|a\s+total\s+|so\s+|all\s+|really\s+"
               r"|totally\s+|fucking\s+|bloody\s+|f\*+ing\s+|absolutely\s+|just\s+)*(?:idiot|idiots|stupid|moron|morons|dumb"
               r"|useless|worthless|pathetic|incompetent|brainless|clown|clowns|loser|losers|imbecile|retard\w*|garbage"
               r"|trash|crap|rubbish|liars?|scammers?|thie(?:f|ves)|fool|fools|bastard|bastards|bitch|asshole|assholes"
               r"|arsehole|dickhead|jerk|joke|piece\s+of\s+(?:shit|crap|garbage|trash)|waste\s+of\s+(?:space|time|oxygen))\b", _I),
    re.compile(r"\b(?:stupid|dumb|useless|idiotic|fucking|f\*+ing|bloody|worthless|pathetic|brainless|incompetent)\s+"
               r"(?:bot|robot|machine|ai|agent|desk|idiots?|morons?|clowns?|people|support|staff|company|assistant"
               r"|service|provider|isp|network|connection)\b"
               r"|\b(?:you|u)(?:\s+guys|\s+people|\s+lot|\s+all)?\s+(?:suck|stink|are\s+the\s+worst)\b", _I),
    re.compile(r"\b(?:fuck|f\*+k|f\*+|screw)\s+(?:you|u|off|yourself|this\s+(?:company|bot|desk))\b|\bshut\s+(?:up|the\s+\w+\s+up)\b"
               r"|\bgo\s+to\s+hell\b|\bgo\s+(?:and\s+)?die\b|\bstfu\b|\bsod\s+off\b|\bpiss\s+off\b", _I),
    # romanised Hindi / Tamil insults aimed at the desk
    re.compile(r"\b(?:tum|tu|aap|tumlog|tum\s+log|nee|neenga)\s+(?:log\s+)?(?:sab\s+)?(?:pagal|bewakoof|bevkoof|bewkoof|gadhe|gadha"
               r"|nalayak|chor|kamine|kaminey|loosu|muttal|waste)\b|\b(?:saala|saale|kameena|kutte|loosu\s+payale)\b", _I),
]
_THREATS = [
    re.compile(r"\b(?:i(?:'ll|\s+will|\s+am\s+going\s+to|'m\s+going\s+to|'m\s+gonna|\s+gonna|\s+shall)|we(?:'ll|\s+will))"
               r"\s+(?:\w+\s+)?(?:kill|hurt|beat|murder|stab|shoot|destroy|burn|smash|attack|punch|find|hunt|come\s+(?:for|after))"
               r"\s+(?:you|your|u|him|her|them|the\s+(?:technician|engineer|agent|staff|tech))\b", _I),
    re.compile(r"\b(?:kill|hurt|stab|shoot)\s+(?:you|u|all\s+of\s+you)\b|\bburn\s+(?:down\s+)?your\s+(?:office|shop|store|building)\b"
               r"|\byou(?:'ll|\s+will)\s+(?:regret|pay\s+for)\s+(?:this|it)\b|\bwatch\s+your\s+back\b|\bi\s+know\s+where\s+you\s+live\b",
               _I),
]

_JOKE = [
    re.compile(r"\b(?:tell|say|share|know|got|have|hear)\s+(?:me\s+|us\s+)?(?:a\s+|any\s+|some\s+|another\s+|one\s+more\s+)?"
               r"(?:good\s+|funny\s+|bad\s+|dad\s+|quick\s+)?(?:jokes?|puns?|riddles?)\b", _I),
    re.compile(r"\bjokes?\s+(?:please|pls|plz)\b|\bknock[\s,-]+knock\b|\bmake\s+me\s+(?:laugh|smile)\b"
               r"|\bwhy\s+did\s+the\s+chicken\b|\bwhat\s+do\s+you\s+call\s+a\b", _I),
    re.compile(r"\b(?:will|would)\s+you\s+(?:marry|date|go\s+out\s+with)\s+me\b|\bdo\s+you\s+love\s+me\b|\bi\s+love\s+you\b"
               r"|\bare\s+you\s+(?:single|married|cute|funny|hot|lonely|bored)\b|\bdo\s+you\s+(?:dream|sleep|eat|have\s+feelings)\b",
               _I),
    re.compile(r"^\W*(?:(?:ha){2,}h?|(?:he){2,}|lol+|lmao+|rofl|😂+|🤣+|xd+|:\)|:d)\W*$", _I),
]

_OFF_TOPIC = [
    re.compile(r"\b(?:weather|forecast|temperature\s+(?:today|tomorrow|outside|in)|going\s+to\s+rain|will\s+it\s+rain"
               r"|is\s+it\s+(?:raining|sunny|cold|hot)\s+(?:in|today|outside))\b", _I),
    re.compile(r"\b(?:write|compose|draft|create|make)\s+(?:me\s+|us\s+)?(?:a|an|some|my|the)\s+(?:\w+\s+){0,2}?(?:poem|poems"
               r"|poetry|haiku|limerick|sonnet|song|rap|lyrics|story|stories|essay|letter|cover\s+letter|speech|tweet|post"
               r"|code|program|script|resume|cv|article|function|class|regex|sql\s+query|algorithm)\b", _I),
    re.compile(r"\b(?:python|javascript|java|c\+\+|rust|golang|sql|html|css)\s+(?:function|code|program|script|class"
               r"|snippet|tutorial|homework)\b|\b(?:sort|reverse)\s+(?:a|the|my)\s+(?:list|array|string)\b", _I),
    re.compile(r"\b(?:poem|haiku|limerick|sonnet|lyrics)\s+(?:about|on|for)\b", _I),
    re.compile(r"\b(?:homework|assignment|exam\s+(?:question|answer)|math(?:s|ematics)?\s+(?:problem|question|homework)"
               r"|solve\s+(?:this\s+)?(?:equation|problem\s+for\s+me|for\s+x)|equation|calculus|algebra|integral|derivative"
               r"|physics\s+question|chemistry\s+question)\b", _I),
    re.compile(r"\b(?:recipe|recipes|how\s+(?:do\s+i|to|can\s+i)\s+(?:cook|bake|make\s+(?:a\s+|an\s+)?(?:cake|pasta|biryani"
               r"|tea|chai|coffee|curry|pizza|bread|dinner|lunch|breakfast)))\b", _I),
    re.compile(r"\b(?:football|cricket|soccer|basketball|baseball|tennis|ipl|nba|nfl|fifa|world\s+cup|premier\s+league"
               r"|match\s+score|live\s+score|who\s+won\s+(?:the|last|yesterday))\b", _I),
    re.compile(r"\b(?:stock|share)\s+(?:price|market|tips?)\b|\b(?:bitcoin|crypto(?:currency)?|forex|ethereum|nifty|sensex)\b", _I),
    re.compile(r"\b(?:capital\s+of|president\s+of|prime\s+minister\s+of|who\s+invented|who\s+discovered|who\s+wrote"
               r"|who\s+is\s+the\s+(?:president|pm|prime\s+minister|king|queen|richest)|population\s+of"
               r"|how\s+tall\s+is)\b", _I),
    re.compile(r"\brecommend\s+(?:me\s+)?(?:a|an|some|any|good)?\s*(?:\w+\s+)?(?:movie|movies|film|films|book|books|show|shows"
               r"|series|restaurant|restaurants|song|songs|game|games|hotel|hotels)\b|\bwhat\s+(?:movie|film|show|book)\s+should"
               r"\b|\bbest\s+(?:movies?|films?|restaurants?|books?)\b", _I),
    re.compile(r"\b(?:horoscope|zodiac|astrology|tarot)\b|\bmeaning\s+of\s+life\b|\b(?:dating|relationship|love|girlfriend"
               r"|boyfriend|marriage)\s+advice\b|\btranslate\s+(?:this|it|the|[\"'])|\btranslate\b.{0,40}\b(?:into|to)\s+[A-Z]?\w+\b",
               _I),
    re.compile(r"\bwhat(?:'s|\s+is)\s+\d+\s*(?:[-+*/x×÷]|plus|minus|times|divided\s+by)\s*\d+|\bwhat\s+time\s+is\s+it\b"
               r"|\bwhat(?:'s|\s+is)\s+the\s+(?:date|time)\s+(?:today|now)\b", _I),
    re.compile(r"\b(?:plan|book|organi[sz]e)\s+(?:a|my|our)\s+(?:trip|holiday|vacation|party|wedding|flight)\b"
               r"|\b(?:tell\s+me\s+about\s+yourself|who\s+(?:made|created|built)\s+you|are\s+you\s+(?:human|a\s+(?:bot|robot|real\s+person)"
               r"|real|an?\s+ai|chatgpt|sentient|conscious))\b", _I),
]

_SERVICE_INTENTS = {Intent.REPORT_PROBLEM, Intent.ASK_STATUS, Intent.CONFIRM_FIXED, Intent.CONFIRM_NOT_FIXED,
                    Intent.MOVE, Intent.PLAN_CHANGE, Intent.GIVE_INFO}
_SERVICE_ASK = re.compile(
    r"\b(?:my|our)\s+(?:internet|wi-?fi|broadband|connection|router|modem|ont|plan|bill|invoice|payment|speed|line"
    r"|fib(?:re|er)|ticket|account|technician|outage|network|service|subscription)\b"
    r"|\b(?:outage|technician|engineer\s+visit|upgrade|downgrade|recharge|refund|new\s+connection)\b",
    _I,
)


def _any(patterns: Sequence[re.Pattern[str]], *texts: str) -> str | None:
    for rx in patterns:
        for t in texts:
            m = rx.search(t)
            if m:
                return m.group(0)
    return None


def _own_names(customer: str | Sequence[str] | None) -> set[str]:
    names: set[str] = set()
    for n in ([customer] if isinstance(customer, str) else list(customer or ())):
        if isinstance(n, str) and n.strip():
            key = name_key(n)
            names.add(key)
            names.update(key.split())
    return names


def _is_someone(who: str, own: set[str]) -> bool:
    key = name_key(who)
    words = key.split()
    if not words or words[0] in _NOT_A_PERSON or key in _CITY_KEYS:
        return False
    if key in own or words[0] in own:
        return False  # the customer asking about their own details
    return True


def _asked(t: str, start: int) -> bool:
    """Whether the words at `start` are asked for: the sentence ends with "?" or an ask verb comes
    earlier in it ("tell me Priya's address", "what is her number?")."""
    left = max(t.rfind(".", 0, start), t.rfind("!", 0, start), t.rfind("?", 0, start), t.rfind("\n", 0, start)) + 1
    ends = [i for i in (t.find(".", start), t.find("!", start), t.find("?", start)) if i != -1]
    right = min(ends) if ends else len(t)
    return t[right:right + 1] == "?" or bool(_ASK_BEFORE.search(t, left, start))


def _other_customer(texts: Sequence[str], own: set[str]) -> str | None:
    for t in texts:
        for m in _POSSESSIVE.finditer(t):
            who = m.group("who")
            mine = bool(re.search(r"\b(?:my|our)\s+$", t[max(0, m.start() - 6):m.start()], _I))
            if who.lower() in _HOUSEHOLD and mine:
                continue  # the household's own things
            if (mine or _is_someone(who, own)) and _asked(t, m.start()):
                return m.group(0)
        for m in _PRONOUN_DATA.finditer(t):
            if _asked(t, m.start()):
                return m.group(0)
        for m in _DATA_OF.finditer(t):
            who = m.group("who")
            generic = re.match(r"(?:customer|user|subscriber|client|account|mr|mrs|ms|miss|dr|my|our|the|someone|somebody"
                               r"|another|other|this|that|\+?\d)\b", who, _I)
            if (generic or _is_someone(who, own)) and _asked(t, m.start()):
                return m.group(0)
        hit = _any(_OTHERS_ASK, t)
        if hit:
            return hit
    return None


def _service_request(text: str) -> bool:
    ex = extract(text)
    return bool(ex.problem or ex.facts or ex.planned or ex.intent in _SERVICE_INTENTS or _SERVICE_ASK.search(text))


def _guard(kind: GuardKind, service: bool, text: str, reason: str) -> Guard:
    alone, with_service, key = GUARD_TABLE[kind]
    action = with_service if service else alone
    return Guard(kind, action, key if action is GuardAction.FIXED_REPLY else None, text, reason)


def assess(text: str, *, customer: str | Sequence[str] | None = None) -> Guard:
    """What kind of message this is and what the desk does with it (see the table above).
    `customer`: the name(s) on file for the customer who wrote it, so that asking for one's own
    details is not taken for asking about someone else."""
    if not isinstance(text, str):
        raise InvalidInput("text must be a string")
    raw = text.strip()
    mixed = detect_romanised(raw) is not None
    english = normalise_mixed_language(raw) if mixed else raw
    texts = [raw] if english == raw else [raw, english]
    own = _own_names(customer)

    hit = _any(_INJECTION, *texts)
    if hit:
        return _guard(GuardKind.PROMPT_INJECTION, False, english, hit)
    hit = _any(_BREAK_IN, *texts)
    if hit:
        return _guard(GuardKind.BREAK_IN, False, english, hit)
    other = _other_customer(texts, own)
    claim = _any([_AUTHORITY, _LEGAL], *texts)
    if claim and (other or _any([_DATA_ASK], *texts)):
        return _guard(GuardKind.AUTHORITY_CLAIM, False, english, claim)
    if other:
        return _guard(GuardKind.OTHER_CUSTOMER_DATA, False, english, other)

    hit = _any(_THREATS, *texts)
    if hit:
        return _guard(GuardKind.ABUSE, False, english, hit)  # a threat is answered the same way, whatever else it says
    service = _service_request(english)
    hit = _any(_ABUSE, *texts)
    if hit:
        return _guard(GuardKind.ABUSE, service, english, hit)
    hit = _any(_JOKE, *texts)
    if hit:
        return _guard(GuardKind.JOKE, service, english, hit)
    hit = _any(_OFF_TOPIC, *texts)
    if hit and not service:
        return _guard(GuardKind.OFF_TOPIC, False, english, hit)
    if hit:  # "the storm knocked my internet out": the off-topic word is incidental
        return _guard(GuardKind.MIXED_LANGUAGE if mixed else GuardKind.ON_TOPIC, True, english, "service; " + hit)
    if mixed:
        return _guard(GuardKind.MIXED_LANGUAGE, service, english, "romanised " + (detect_romanised(raw) or ""))
    return _guard(GuardKind.ON_TOPIC, service, english, "")
