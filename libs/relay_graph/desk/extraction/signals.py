"""What a message is about, for the rules extractor: problems (symptoms, by kind), a fix working or
not, status questions, greetings, off-topic requests and asks on someone else's behalf."""

from __future__ import annotations

import re
from relay_graph.desk.extraction import lexicon as lx
from relay_graph.desk.extraction.schema import IssueKind

# ---------------------------------------------------------------------------------------------
# Problems.

NEG_SYMPTOM_BEFORE = re.compile(
    r"(?:\b(?:not|never|no\s+longer|no\s+more|isn't|aren't|wasn't|used\s+to\s+be|used\s+to|without|stopped)\b|n't)"
    r"(?:\s+(?:be|being|been|so|as|that|too|very|really|even|any|at\s+all|all))*\s*$",
    re.I,
)
SYMPTOMS: list[tuple[IssueKind, re.Pattern[str]]] = [
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
        r"|\bno\s+net\b|\b(?:internet|net|connection|broadband|fib(?:er|re)|line|network|service)\b[^.!?]{0,12}?\b(?:is\s+|'s\s+|has\s+been\s+|went\s+|was\s+)?"
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
KIND_RANK = {kind: i for i, (kind, _) in enumerate(SYMPTOMS)}
WIFI = re.compile(r"\b(?:wi-?fi|wireless)\b", re.I)
WIRED = re.compile(r"\b(?:ethernet|lan\s+cable|wired|cable\s+connection|lan\s+port)\b", re.I)
PLACE = re.compile(
    r"\b(?:(?:in|at|on)\s+(?:the|my|our)\s+)?(?P<p>" + "|".join(re.escape(p) for p in sorted(lx.PLACES, key=len, reverse=True)) + r")\b",
    re.I,
)
LABELS = {
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

FIXED = re.compile(
    r"\b(?:works|working|fixed|sorted|resolved|solved|fine|good|ok|okay|back\s+online|back\s+up|back\s+to\s+normal|fast)\s+(?:now|again)\b"
    r"|\b(?:it's|it\s+is|is|all|everything's|everything\s+is|that's)\s+(?:now\s+)?(?:fixed|sorted|resolved|solved|working|back|good|fine)\b"
    r"|\b(?:that|this|it|the\s+(?:reboot|restart|reset))\s+(?:fixed|solved|sorted|did)\s+(?:it|the\s+(?:problem|issue|trick))\b"
    r"|\b(?:problem|issue)\s+(?:is\s+|has\s+been\s+)?(?:solved|fixed|resolved|gone|sorted)\b|\ball\s+good\b|\bthat\s+worked\b"
    r"|(?:\b(?:not|isn't|aren't|no\s+longer)\s+(?:\w+\s+){0,2}?(?:slow|dropping|down|buffering|lagging|laggy|disconnecting|frozen|red)\b[^.!?]{0,15}?\b(?:anymore|any\s+more|now)\b)"
    r"|\bno\s+longer\s+(?:slow|dropping|down|buffering|lagging|laggy|disconnecting|frozen|red)\b"
    r"|\b(?:red\s+)?(?:light|led|los(?:\s+light)?)\s+(?:is|has\s+gone|went|turned)\s+(?:off|out|green)\b"
    r"|\b(?:everything|all)\s+(?:works|is\s+working|working)\b|\beverything's\s+working\b"
    r"|\bno\s+more\s+(?:drops|buffering|lag|issues|problems|disconnections)\b|\b(?:internet|wi-?fi|connection|it)\s+(?:is\s+)?back\b"
    # "it started working on its own", "came back by itself", "seems fine now", "its up again"
    r"|\b(?:started|starts|began)\s+working\b|\b(?:came|come|coming)\s+back\b|\b(?:on\s+its\s+own|by\s+itself)\b"
    r"|\b(?:fixed|sorted|resolved|solved)\s+(?:itself|on\s+its\s+own)\b|\b(?:its|it's|seems|looks)\s+(?:all\s+)?(?:fine|ok|okay"
    r"|good|alright|normal|up)(?:\s+(?:now|again))?\b|(?<!not\s)(?<!n't\s)(?<!never\s)\bworking\s+(?:fine|ok|okay|properly|perfectly|normally)\b"
    r"|\b(?:issue|problem)\s+(?:has\s+)?(?:gone|disappeared|went\s+away)\b|\b(?:wapas\s+aa\s+gaya|aa\s+gaya|chal\s+gaya|chalne\s+laga)\b",
    re.I,
)
NOT_FIXED = re.compile(
    r"\bstill\b[^.!?]{0,20}?\b(?:not\b|n't|broken|slow|down|dropping|drops|disconnect\w*|buffer\w*|the\s+same|same|bad|lagg\w*|"
    r"no\s+internet|red|frozen|stuck|dead|off|failing|happening|an?\s+(?:issue|problem)|offline)"
    r"|(?:\b(?:not|never)|n't|\bhas\s+not|\bhave\s+not)\s+(?:been\s+)?(?:fixed|resolved|solved|sorted)\b"
    r"|(?:\b(?:did|does|has|have)\s+not|\b(?:didn't|doesn't|hasn't|haven't))\s+(?:help|work|fix|change|solve)\w*"
    r"|\bsame\s+(?:problem|issue|thing)\b|\bno\s+(?:change|difference|improvement)\b|\b(?:broken|down|slow)\s+again\b"
    r"|\bstopped\s+working\s+again\b|\bnot\s+working\s+(?:now|again)\b|\b(?:didn't|did\s+not)\s+work\b",
    re.I,
)
STATUS = re.compile(
    r"\b(?:any|an)\s+(?:update|news|progress|eta)\b|\bstatus\b|\bupdate\s+on\b"
    r"|\bwhen\s+will\b[^.?]{0,40}?\b(?:fixed|resolved|back|come|arrive|done|working|sorted|restored|here)\b"
    r"|\bhow\s+long\b[^.?]{0,30}?\b(?:take|be|until|till)\b|\b(?:where\s+is|where's)\s+(?:the\s+|my\s+)?(?:technician|engineer|tech|ticket)\b"
    r"|\bis\s+(?:anyone|someone|somebody)\s+(?:working|looking)\s+on\b|\bwhat(?:'s|\s+is)\s+happening\s+with\b|\bfollow(?:ing)?[\s-]+up\b"
    r"|\b(?:fixed|resolved|sorted)\s+(?:it\s+)?yet\b|\bis\s+there\s+an?\s+outage\b|\bany\s+outages?\b",
    re.I,
)
OFF_TOPIC = re.compile(
    r"\b(?:weather|forecast|recipe|cook(?:ing)?|jokes?|poem|song|lyrics|football|cricket|soccer|nba|ipl|movies?|film|stock\s+price|"
    r"share\s+price|bitcoin|crypto|homework|essay|capital\s+of|president|prime\s+minister|election|politic\w*|horoscope|zodiac|"
    r"meaning\s+of\s+life|girlfriend|boyfriend|dating|translate|who\s+won|tell\s+me\s+about\s+yourself|are\s+you\s+(?:human|a\s+bot|real|an?\s+ai)|"
    r"write\s+(?:me\s+)?(?:a|an|some)\s+(?:story|poem|essay|song|code|program|script|letter))\b",
    re.I,
)
GREETING = re.compile(
    r"^\s*(?:hi+|hel+o+|he+y+|hiya|howdy|salaam|salam|good\s+(?:morning|afternoon|evening|day)|greetings|namaste|namaskar|hola|bonjour|hallo|ciao|yo|g'day)"
    r"(?:\s+(?:there|team|all|everyone|folks|guys|support))?\s*[!.,]*\s*$",
    re.I,
)
MOVE_WORDS = re.compile(
    r"\b(?:mov(?:e|ed|ing)\s+(?:house|home|flats?|out|in|away)|relocat\w+|new\s+address|change\s+(?:of\s+)?(?:my\s+)?address|"
    r"shift(?:ing)?\s+(?:house|home)|transfer\s+(?:my\s+)?(?:connection|service|line))\b",
    re.I,
)
PLAN_WORDS = re.compile(
    r"\b(?:upgrade|downgrade|change\s+(?:my\s+)?plan|switch\s+plans?|plan\s+options|which\s+plans?|what\s+plans?"
    r"|plans?\s+(?:do\s+you|available)|(?:new|faster|fastest|cheaper|cheapest|better|bigger|smaller|different|another)\s+plan"
    r"|cancel\s+(?:my\s+)?(?:plan|subscription))\b",
    re.I,
)
SOMEONE_ELSE = re.compile(
    r"\b(?:another|other|a\s+different|some\s+other)\s+(?:customer|user|subscriber|person)(?:'s|s'|s)?\b|\b(?:someone|somebody|anyone)\s+else'?s?\b"
    r"|\bwho\s+(?:else\s+)?(?:lives|live|is\s+living)\s+(?:in|at|on|near)\b|\b(?:list|show)\s+(?:me\s+)?(?:all\s+)?(?:the\s+)?(?:customers|users|subscribers)\b"
    r"|\b(?:which|what|how\s+many)\s+(?:other\s+)?customers\b",
    re.I,
)
SOMEONE_ELSE_ASK = re.compile(
    r"(?:\b(?:his|her|their)|(?<!\w)(?!(?:it|that|what|who|there|here|name|let|today|he|she)'s)[A-Za-z]+'s)\s+"
    r"(?:(?:home|phone|mobile|email|current)\s+)?(?:address|phone|number|email|plan|account|bill|details|ticket|router|location|data|info\w*)\b"
    r"|\b(?:address|phone\s+number|number|email|plan|account|details|bill)\s+(?:of|for)\s+(?:customer\s+|mr\.?\s+|mrs\.?\s+|ms\.?\s+)?[A-Z][a-z]+",
)
ASK_VERB = re.compile(
    r"^(?:(?:can|could|would)\s+you\s+)?(?:please\s+)?(?:tell|give|show|share|send|find|look\s+up|check|get)\b"
    r"|\b(?:i\s+(?:want|need|would\s+like|'d\s+like)\s+to\s+(?:know|see|check)|asking\s+(?:about|for)|tell\s+me|show\s+me|give\s+me)\b",
    re.I,
)


