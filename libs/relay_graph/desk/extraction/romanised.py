"""Hindi and Tamil written in Latin letters, mixed with English ("mera internet kaam nahi kar raha
since morning", "en wifi romba slow ah iruku"): how to tell, and the common phrases for the desk's
job (not working, slow, keeps disconnecting, since morning, upstairs, my name is, I live in, we
moved to ...) rewritten in plain English so the rules extractor can carry on.

A curated phrase table, not a translator: what it does not know stays as written (names, cities,
English words). Phrases of one language are only rewritten when that language was detected, so
an English "main road" or the Spanish "en" are never touched. Hindi in Devanagari is read through
the same table, its known words first spelt in Latin letters (`devanagari.romanise`)."""

from __future__ import annotations

import re
from collections.abc import Callable

from relay_graph.desk.extraction.devanagari import romanise

# Words that are Hindi (resp. Tamil) in Latin letters and hardly ever English. Two of them, or one
# known phrase, make a message romanised Hindi (Tamil).
HINDI_MARKERS = frozenset("""
hai hain nahi nahin nhi nahee raha rahi rahe kaam kya kyun kyon mera meri mere hamara hamari hamare humara
mujhe muje abhi bahut bohot bahot subah shaam raat theek thik chal chala chalta gaya gayi gaye hoga hota
karo kariye kijiye batao bataiye yaar bhai ghar aur lekin wala wali wale waale upar neeche kamre kamra baar
jaldi dijiye chahiye hua hui hoon hun tha thi kitna kab kaise kahan pehle aaj hafte mahine paise laal batti
naam rehta rehti rahta rahti dheema dheere dhire kamzor kal kyu bilkul sahi ekdum gadbad
""".split())
TAMIL_MARKERS = frozenset("""
romba rombha iruku irukku irukkudhu irukkuthu irukudhu illa illai aagala agala aagudhu aaguthu agudhu varala
varalai enna eppo epo ippo ipo innum inum veetla veetula veedu naan naanga nanga enga sari seri konjam nethu
neththu kaalaila kalaila kaalai machan machi aachu achu aayiduchu aagiduchu pannunga pannu sollunga sollu
paarunga vela velai seiyala seyyala pannala maadi maadila keezha dhaan thaan irundhu irunthu irundu naala
thadava thadavai eriyudhu eriyuthu peru ennoda enoda semma adikadi adikkadi kammi saayangalam raathiri
irukken irukkaen iruken
""".split())

_WORD = re.compile(r"[a-z]+")


def _count(text: str, markers: frozenset[str]) -> int:
    return len({w for w in _WORD.findall(text.lower()) if w in markers})


_NUM = {"ek": "1", "do": "2", "teen": "3", "char": "4", "chaar": "4", "paanch": "5", "panch": "5", "chhe": "6",
        "saat": "7", "onnu": "1", "rendu": "2", "moonu": "3", "naalu": "4", "anju": "5", "aaru": "6", "ezhu": "7"}
_DAYS = {"somvar": "monday", "mangalvar": "tuesday", "budhvar": "wednesday", "guruvar": "thursday",
         "shukravar": "friday", "shanivar": "saturday", "ravivar": "sunday", "itwar": "sunday", "itvaar": "sunday",
         "thingal": "monday", "sevvai": "tuesday", "budhan": "wednesday", "viyazhan": "thursday",
         "velli": "friday", "sani": "saturday", "nyayiru": "sunday"}
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"


def _n(word: str) -> str:
    return _NUM.get(word.lower(), word)


def _span(unit: str) -> Callable[[re.Match[str]], str]:
    def repl(m: re.Match[str]) -> str:
        n = _n(m.group(1))
        return f"for {n} {unit}" + ("" if n == "1" else "s")
    return repl


Rule = tuple[re.Pattern[str], "str | Callable[[re.Match[str]], str]"]


def _rules(pairs: list[tuple[str, str | Callable[[re.Match[str]], str]]]) -> list[Rule]:
    return [(re.compile(p, re.I), r) for p, r in pairs]


_HAI = r"(?:\s+(?:hai|hain|he|h))?"
_RAHA = r"(?:raha|rahi|rahe|rha|rhi)"
_NAHI = r"(?:nahi|nahin|nhi|nahee|nai)"
_HO_GAYA = r"(?:ho\s+)?(?:gaya|gayi|gaye|gya|gyi)"
_HINDI_DAY = "|".join(_DAYS) + "|" + _WEEKDAYS

HINDI_PHRASES: list[Rule] = _rules([
    # who and where
    (r"\b(?:mera|meri)\s+naam\s+([A-Za-z][\w'-]*(?:\s+[A-Z][\w'-]*)?|[\u0900-\u097F]+(?:\s+[\u0900-\u097F]+)?)"
     r"\s+(?:hai|he)\b", r"my name is \1"),
    (r"\b(?:main|mai|mein)\s+([A-Za-z][\w-]*(?:\s+[A-Z][\w-]*)?)\s+(?:mein|me|mei|mai)\s+(?:rehta|rehti|rahta|rahti"
     r"|reheta|rehete)\s+(?:hoon|hu|hun|hain|hai)\b", r"I live in \1"),
    (r"\b(?:hum|ham)\s+(?:log\s+)?([A-Za-z][\w-]*(?:\s+[A-Z][\w-]*)?)\s+(?:mein\s+|me\s+)?(?:shift|move|chale)\s+"
     + _HO_GAYA + r"(?:\s+(?:hain|hai|he))?\b", r"we moved to \1"),
    (r"\b(?:main|mai)\s+([A-Za-z][\w-]*(?:\s+[A-Z][\w-]*)?)\s+(?:mein\s+|me\s+)?(?:shift|move)\s+" + _HO_GAYA
     + r"(?:\s+(?:hoon|hu|hun))?\b", r"I moved to \1"),
    # whose
    (r"\b([A-Za-z][\w-]*)\s+(?:ka|ki|ke)\s+(address|number|phone\s+number|mobile\s+number|phone|email|plan|bill|details"
     r"|account|password)\s+(?:batao|bataiye|bata\s+do|do|dijiye|chahiye|kya\s+hai|kya\s+he)\b", r"tell me \1's \2"),
    # when
    (r"\b(?:aaj\s+)?subah\s+se\b", "since this morning"),
    (r"\bkal\s+raat\s+se\b", "since last night"),
    (r"\braat\s+se\b", "since last night"),
    (r"\bkal\s+se\b", "since yesterday"),
    (r"\b(?:aaj\s+)?shaam\s+se\b", "since this evening"),
    (r"\b(?:aaj\s+)?dopahar\s+se\b", "since this afternoon"),
    (rf"\b({_HINDI_DAY})\s+se\b", lambda m: "since " + _DAYS.get(m.group(1).lower(), m.group(1).lower())),
    (r"\b(\d+|ek|do|teen|char|chaar|paanch|panch)\s+din\s+se\b", _span("day")),
    (r"\b(\d+|ek|do|teen|char|chaar)\s+(?:hafte|hafta|haftey|week)\s+se\b", _span("week")),
    (r"\b(\d+|ek|do|teen|char|chaar)\s+(?:ghante|ghanta|ghanton)\s+se\b", _span("hour")),
    (r"\bpichle\s+hafte\b", "last week"),
    (r"\b(?:abhi|ab)\s+bhi\b", "still"),
    # what is wrong
    (rf"\b(?:kaam|kam)\s+{_NAHI}\s+(?:kar|kr)\s+{_RAHA}{_HAI}\b", "is not working"),
    (rf"\b{_NAHI}\s+chal\s+{_RAHA}{_HAI}\b", "is not working"),
    (rf"\bchal\s+{_NAHI}\s+{_RAHA}{_HAI}\b", "is not working"),
    (rf"\b{_NAHI}\s+(?:aa|aa\s+raha|aa\s+rahi){_HAI}\b", "is not working"),
    (r"\bband\s+(?:hai|he|ho\s+gaya|ho\s+gayi|pada\s+hai|padi\s+hai)\b", "is down"),
    (rf"\b(?:bahut|bohot|bahot|kaafi|bahut\s+hi)\s+(?:slow|dheema|dheemi|dheere|dhire)"
     rf"(?:\s+(?:chal\s+{_RAHA}|{_HO_GAYA}|hai|he|hain))*\b", "is very slow"),
    (rf"\b(?:dheema|dheemi|dheere|dhire)\s+(?:chal\s+{_RAHA}|hai|he){_HAI}\b", "is slow"),
    (rf"\bslow\s+(?:chal\s+{_RAHA}|{_HO_GAYA}|hai|he){_HAI}\b", "is slow"),
    (rf"\bbaar\s+baar\s+(?:disconnect|cut|kat|drop)\s+(?:ho\s+)?(?:{_RAHA}|jata|jaata|jati|jaati|hota|hoti){_HAI}\b",
     "keeps disconnecting"),
    (r"\b(signal|wifi|wi-fi|network)\s+(?:bahut\s+)?kamzor\b(?:\s+(?:hai|he))?", r"\1 is weak"),
    (r"\bkamzor\b", "weak"),
    (r"\b(?:laal|lal)\s+(?:batti|light|bulb|led)\b(?:\s+(?:jal\s+rahi|jal\s+raha|aa\s+rahi|blink\s+kar\s+rahi)(?:\s+hai)?)?",
     "red light is on"),
    (rf"\bhang\s+(?:{_HO_GAYA}|ho\s+{_RAHA}|ho\s+jata|hota){_HAI}\b", "is frozen"),
    (r"\b(?:do|2)\s+baar\s+(?:paise\s+)?(?:kat|cut|deduct|charge)\s*(?:gaye|gaya|liya|liye|hua|hue|ho\s+gaye|kiya|kiye)?\b",
     "charged twice"),
    (rf"\bpayment\s+(?:fail|failed)\s*(?:{_HO_GAYA}|ho\s+{_RAHA})?{_HAI}\b", "payment failed"),
    (r"\bkab\s+(?:tak\s+)?(?:theek|thik|sahi)\s+(?:hoga|ho\s+jayega|ho\s+jaega|karoge|karenge)\b", "when will it be fixed"),
    (rf"\b(?:ab\s+)?(?:theek|thik|sahi)\s+{_HO_GAYA}{_HAI}\b", "it is fixed now"),
    (rf"\b(?:ab\s+)?(?:chal|kaam\s+kar)\s+{_RAHA}\s+(?:hai|he)\b", "it is working now"),
])
HINDI_WORDS: list[Rule] = _rules([
    # where, on what
    (r"\bupar\s+(?:wale|waale|vale|wala|waala)\s+(?:kamre|kamra|room)\s+(?:mein|me|mei)\b", "in the upstairs room"),
    (r"\bneeche\s+(?:wale|waale|vale|wala|waala)\s+(?:kamre|kamra|room)\s+(?:mein|me|mei)\b", "in the downstairs room"),
    (r"\bupar\b", "upstairs"),
    (r"\bneeche\b", "downstairs"),
    (r"\bghar\s+(?:mein|me|par|pe)\b", "at home"),
    (r"\b(tv|laptop|phone|mobile|computer|pc|ps5|xbox|router|modem)\s+(?:pe|par|mein|me)\b", r"on the \1"),
    (r"\bis\s+(month|week|mahine|hafte)\b", lambda m: "this " + {"mahine": "month", "hafte": "week"}.get(
        m.group(1).lower(), m.group(1).lower())),
    (r"\b(bedroom|kitchen|hall|kamre|kamra|room)\s+(?:mein|me|mei)\b", lambda m: "in the " + (
        "room" if m.group(1).lower() in ("kamre", "kamra") else m.group(1))),
    # words
    (r"\bnet\b", "internet"),
    (r"\bmausam\b", "weather"),
    (r"\bkya\b", "what"),
    (r"\baaj\b", "today"),
    (r"\b(?:mera|meri|mere)\b", "my"),
    (r"\b(?:hamara|hamari|hamare|humara|humari|humare)\b", "our"),
    (r"\bbahut\b|\bbohot\b|\bbahot\b", "very"),
    (r"\b(?:aur)\b", "and"),
    (r"\bmein\b", "in"),
    (r"\b(?:lekin|par)\b(?=\s)", "but"),
    (r"\b(?:ka|ki|ke|ko)\b(?=\s)", ""),
    (r"\b(?:hai|hain|he|ji|yaar|bhai|toh|na)\b", ""),
])
HINDI = HINDI_PHRASES + HINDI_WORDS

_IRU = r"(?:iruku|irukku|irukkudhu|irukkuthu|irukudhu|irukuthu)"
_AAGU = r"(?:aagudhu|aaguthu|agudhu|aagudu|aaguthu|poguthu|pogudhu)"
_IRUNDHU = r"(?:irundhu|irunthu|irundu|la\s+irundhu|la\s+irunthu|le\s+irundhu)"

TAMIL_PHRASES: list[Rule] = _rules([
    (r"\b(?:en|enoda|ennoda)\s+(?:peru|per|pear|name)\s+([A-Za-z][\w'-]*(?:\s+[A-Z][\w'-]*)?)\b", r"my name is \1"),
    (r"\b(?:naan|nan)\s+([A-Za-z][\w-]*(?:\s+[A-Z][\w-]*)?)\s*(?:la|le|il|ile)\s+(?:irukken|irukkaen|irukean|irukiren"
     r"|irukkiren|iruken|vasikiren|irukkom|irukom)\b", r"I live in \1"),
    (r"\b(?:naanga|nanga|naangal|naangalam)\s+([A-Za-z][\w-]*(?:\s+[A-Z][\w-]*)?)\s*(?:ku|kku|kki|ukku)\s+"
     r"(?:shift|move)\s+(?:aagitom|aayitom|aagittom|aayittom|aanom|panitom|pannitom|aagiyachu|aayachu)\b",
     r"we moved to \1"),
    (r"\b(?:naan|nan)\s+([A-Za-z][\w-]*(?:\s+[A-Z][\w-]*)?)\s*(?:ku|kku|ukku)\s+(?:shift|move)\s+"
     r"(?:aagiten|aayiten|aanen|pannitten|aagitten)\b", r"I moved to \1"),
    # when
    (rf"\b(?:kaalaila|kalaila|kaalaiyila|kaalai|kalai|morning)\s+(?:la\s+)?{_IRUNDHU}\b", "since this morning"),
    (rf"\b(?:nethu|neththu|nethiku|yesterday)\s+(?:la\s+)?{_IRUNDHU}\b", "since yesterday"),
    (rf"\b(?:nethu\s+)?(?:raathiri|rathiri|raatri|night)\s+(?:la\s+)?{_IRUNDHU}\b", "since last night"),
    (rf"\b(?:saayangalam|sayangalam|evening)\s+(?:la\s+)?{_IRUNDHU}\b", "since this evening"),
    (rf"\b({_HINDI_DAY})\s+(?:la\s+)?{_IRUNDHU}\b", lambda m: "since " + _DAYS.get(m.group(1).lower(), m.group(1).lower())),
    (r"\b(\d+|onnu|rendu|moonu|naalu|anju)\s+(?:naala|naalaa|naal\s+aa|naalaga|naalaa|days?\s+aa)\b", _span("day")),
    (r"\b(?:innum|inum)\b", "still"),
    # what is wrong
    (r"\b(?:work|velai|vela)\s+(?:aagala|agala|aagalai|aagavillai|aagave\s+illa|seiyala|seyyala|seiyyala|pannala"
     r"|aagudhu\s+illa|panna\s+matengudhu|aaga\s+matengudhu|aaga\s+maatengudhu|aga\s+matengudhu)\b", "is not working"),
    (r"\b(?:net|internet)\s+(?:varala|varalai|varave\s+illa|illa|illai|poiduchu|pochu)\b", "no internet"),
    (r"\b(wifi|wi-fi)\s+(?:varala|varalai|illa|illai|poiduchu|pochu)\b", "no wifi"),
    (rf"\b(?:romba|rombha|semma)\s+slow\s*(?:ah|aa|a)?\s*(?:{_IRU}|{_AAGU})\b", "is very slow"),
    (rf"\bslow\s*(?:ah|aa|a)?\s*(?:{_IRU}|{_AAGU})\b", "is slow"),
    (r"\b(?:adikadi|adikkadi|adhikkadi|thirumba\s+thirumba)\s+(?:disconnect|cut)\s*(?:aagudhu|aaguthu|agudhu|aagudu"
     r"|aayidudhu|aagiduthu|aagidudhu)\b", "keeps disconnecting"),
    (rf"\b(?:disconnect|cut)\s+(?:aagitte|aagite|aayitte)\s+{_IRU}\b", "keeps disconnecting"),
    (rf"\b(?:disconnect|cut)\s*(?:aagudhu|aaguthu|agudhu|aagidudhu|aagiduthu)\b", "keeps disconnecting"),
    (r"\bsignal\s+(?:romba\s+)?(?:kammi|kammiya|koranju|weak)\s*(?:ah|aa)?\s*(?:iruku|irukku)?\b", "signal is weak"),
    (r"\b(?:sivappu|sigappu|red)\s+(?:light|lightu|led)\s+(?:eriyudhu|eriyuthu|eriyithu|blink\s+aagudhu|varudhu|iruku"
     r"|irukku|erigiradhu)\b", "red light is on"),
    (r"\bhang\s+(?:aagiduchu|aayiduchu|aagudhu|aaguthu|aayirchu|aachu|aagirukku)\b", "is frozen"),
    (r"\b(?:rendu|2)\s+(?:thadava|thadavai|dhadava|times)\s+(?:charge|cut|deduct)\w*\s*(?:aagiduchu|aayiduchu|pannitanga"
     r"|panniteenga|aachu|aagirukku)?\b", "charged twice"),
    (r"\bpayment\s+fail\s*(?:aagiduchu|aayiduchu|aachu|aagudhu|aaguthu)\b", "payment failed"),
    (r"\b(?:eppo|epo|eppa)\s+(?:sari|seri)\s+(?:aagum|agum|pannuveenga|panreenga|pannuvinga)\b", "when will it be fixed"),
    (r"\b(?:ippo|ipo)\s+(?:work\s+aagudhu|sari\s+aagiduchu|ok|okay|fine|nalla\s+iruku)\b", "it is working now"),
    (r"\b(?:sari|seri)\s+(?:aagiduchu|aayiduchu|aachu)\b", "it is fixed now"),
])
TAMIL_WORDS: list[Rule] = _rules([
    # where, on what
    (r"\b(?:maadi|mela|upstairs)\s*(?:room\s*)?(?:la|le|il)\b", "upstairs"),
    (r"\bmaadi(?:la)?\b", "upstairs"),
    (r"\b(?:keezha|keela)\s*(?:room\s*)?(?:la|le)?\b", "downstairs"),
    (r"\b(?:enga|en)\s+(?:veetla|veetula|veetle|veedu)\b", "at my home"),
    (r"\b(?:veetla|veetula|veetle)\b", "at home"),
    (r"\b(tv|laptop|phone|mobile|computer|pc|ps5|xbox|router|modem)\s*(?:la|le|il)\b", r"on the \1"),
    # words
    (r"\b(?:en|enoda|ennoda)\b", "my"),
    (r"\b(?:enga|engaloda)\b", "our"),
    (r"\b(?:romba|rombha|semma)\b", "very"),
    (r"\bkonjam\b", "a bit"),
    (r"\b(?:da|pa|dhaan|thaan|machan|machi|ah|aa|nu|ma)\b", ""),
])
TAMIL = TAMIL_PHRASES + TAMIL_WORDS

COMMON: list[Rule] = _rules([
    (r"\bsince\s+(morning|afternoon|evening)\b", r"since this \1"),
    (r"\bsince\s+night\b", "since last night"),
    (r"\bsince\s+(\d+)\s+days?\b", _span("day")),
    (r"\bsince\s+(\d+)\s+hours?\b", _span("hour")),
    # the time said before the verb, as Hindi and Tamil put it ("net subah se nahi chal raha"): after it
    (r"\b(since\s+(?:this|last)\s+\w+|since\s+yesterday|since\s+\w+day|for\s+\d+\s+(?:day|week|hour)s?)\s+"
     r"(is\s+not\s+working|is\s+very\s+slow|is\s+slow|keeps\s+disconnecting|is\s+down|is\s+weak|is\s+frozen"
     r"|no\s+internet|no\s+wifi)\b", r"\2 \1"),
])


def detect(text: str) -> str | None:
    """"hi" or "ta" when the text holds romanised Hindi or Tamil, else None."""
    if not isinstance(text, str) or not text:
        return None
    latin = romanise(text)
    if latin != text:  # Devanagari words the table knows: Hindi, however few
        return "hi"
    low = text.lower()
    hi, ta = _count(low, HINDI_MARKERS), _count(low, TAMIL_MARKERS)
    hi_phrase = any(rx.search(low) for rx, _ in HINDI_PHRASES)
    ta_phrase = any(rx.search(low) for rx, _ in TAMIL_PHRASES)
    scores = {"hi": hi + 2 * hi_phrase, "ta": ta + 2 * ta_phrase}
    best = max(scores, key=scores.__getitem__)
    return best if scores[best] >= 2 else None


def _apply(text: str, rules: list[Rule]) -> str:
    for rx, repl in rules:
        text = rx.sub(repl, text)
    return text


def normalise_mixed_language(text: str) -> str:
    """The message with its romanised Hindi/Tamil phrases in English (unchanged when it has none)."""
    if not isinstance(text, str):
        return text
    lang = detect(text)
    if lang is None:
        return text
    out = _apply(romanise(text), HINDI if lang == "hi" else TAMIL)
    other = "ta" if lang == "hi" else "hi"
    if _count(out, TAMIL_MARKERS if other == "ta" else HINDI_MARKERS) >= 2:
        out = _apply(out, TAMIL if other == "ta" else HINDI)
    out = _apply(out, COMMON)
    out = re.sub(r"[ \t]+([,.!?])", r"\1", out)
    return re.sub(r"[ \t]{2,}", " ", out).strip()
