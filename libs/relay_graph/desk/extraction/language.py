"""A guess at the language a message is written in: its script, else its commonest small words.
Only a hint for wording replies; it never changes what is extracted."""

from __future__ import annotations

import re
import unicodedata


_SCRIPTS = [("DEVANAGARI", "hi"), ("BENGALI", "bn"), ("TAMIL", "ta"), ("TELUGU", "te"), ("KANNADA", "kn"),
            ("MALAYALAM", "ml"), ("GUJARATI", "gu"), ("GURMUKHI", "pa"), ("ARABIC", "ar"), ("CYRILLIC", "ru"),
            ("GREEK", "el"), ("HANGUL", "ko"), ("HIRAGANA", "ja"), ("KATAKANA", "ja"), ("CJK", "zh"), ("THAI", "th"),
            ("HEBREW", "he")]
_STOPWORDS = {
    "en": {"the", "is", "my", "i", "and", "to", "it", "not", "you", "in", "on", "have", "since", "with", "was", "for",
           "internet", "please", "slow", "working", "a", "me", "hi", "hello", "this", "of"},
    "es": {"el", "la", "los", "las", "es", "mi", "que", "de", "y", "con", "funciona", "desde", "lento", "tengo",
           "está", "por", "para", "hola", "muy", "pero", "una", "gracias"},
    "fr": {"le", "la", "les", "est", "mon", "ma", "je", "ne", "pas", "de", "et", "avec", "depuis", "bonjour", "lent",
           "marche", "une", "un", "merci", "très", "mais", "ça"},
    "de": {"der", "die", "das", "ist", "mein", "meine", "ich", "nicht", "und", "mit", "seit", "hallo", "langsam",
           "funktioniert", "kein", "keine", "danke", "sehr", "aber", "geht"},
    "pt": {"o", "os", "é", "meu", "minha", "não", "que", "de", "e", "com", "desde", "olá", "lento", "está", "funciona",
           "obrigado", "muito", "mas", "uma"},
    "it": {"il", "lo", "è", "mio", "mia", "non", "che", "di", "e", "con", "da", "ciao", "lento", "funziona", "grazie",
           "molto", "ma"},
    "nl": {"de", "het", "is", "mijn", "ik", "niet", "en", "met", "sinds", "hallo", "langzaam", "werkt", "dank", "heel"},
    "hi": {"hai", "nahi", "nahin", "mera", "meri", "kya", "chal", "raha", "rahi", "ho", "ka", "ki", "ke", "bhai", "kab",
           "kaise", "aur", "bahut", "ghar", "mein", "hain", "kar", "karo", "kuch"},
}


def language_hint(text: str) -> str | None:
    """An ISO 639-1 code, "en" when nothing else scores higher, None when there are no letters."""
    counts: dict[str, int] = {}
    for ch in text:
        if ch.isalpha() and ord(ch) > 0x24F:
            try:
                name = unicodedata.name(ch)
            except ValueError:
                continue
            for script, code in _SCRIPTS:
                if name.startswith(script) or (script == "CJK" and "CJK" in name):
                    counts[code] = counts.get(code, 0) + 1
                    break
    if counts:
        return max(counts, key=counts.__getitem__)
    words = re.findall(r"[^\W\d_]+", text.lower())
    if not words:
        return None
    scores = {code: sum(w in stop for w in words) for code, stop in _STOPWORDS.items()}
    best = max(scores, key=lambda c: (scores[c], c == "en"))
    return best if scores[best] > scores["en"] else "en"
