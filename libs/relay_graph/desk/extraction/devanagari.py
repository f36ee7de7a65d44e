"""Hindi written in Devanagari ("मेरा नेट सुबह से नहीं चल रहा"): the words of the desk's job
spelt in Latin letters as romanised Hindi is (`romanised`), so the same phrase table reads both
scripts ("mera net subah se nahi chal raha" -> "my internet is not working since this morning").

A word table, not a transliterator: a word it does not know (a name, a street) stays as written,
and a message with none it knows is left alone. A few words with no phrase in the romanised table
go straight to English ("मदद" help, "धन्यवाद" thank you)."""

from __future__ import annotations

import re
import unicodedata

# Devanagari letters, vowel signs, virama and nukta: the characters of one word.
_WORD = re.compile(r"[\u0900-\u0963\u0971-\u097F]+")
_DIGITS = str.maketrans("०१२३४५६७८९", "0123456789")

# Spellings with a hyphen or a space inside, read before the words.
_PHRASES = {
    "वाई-फाई": "wifi", "वाई फाई": "wifi", "वाई-फ़ाई": "wifi", "वाई फ़ाई": "wifi",
    "ठीक से": "theek se",
}

_TABLE_TEXT = """
नमस्ते namaste | नमस्कार namaskar | हेलो hello | हैलो hello
मेरा mera | मेरी meri | मेरे mere | हमारा hamara | हमारी hamari | हमारे hamare | मैं main | मुझे mujhe | हम hum
इंटरनेट internet | इन्टरनेट internet | नेट net | वाईफाई wifi | वाईफ़ाई wifi | वायफाय wifi | राउटर router
मॉडेम modem | मोडेम modem | सिग्नल signal | नेटवर्क network | कनेक्शन connection | स्पीड speed | बिल bill
पैसे paise | प्लान plan | लाइट light | बत्ती batti | लाल laal | टीवी tv | फोन phone | फ़ोन phone | मोबाइल mobile
लैपटॉप laptop | कंप्यूटर computer | पेमेंट payment | फेल fail | फ़ेल fail | डिस्कनेक्ट disconnect | स्लो slow
है hai | हैं hain | था tha | थी thi | नहीं nahi | नही nahi | चल chal | चला chala | रहा raha | रही rahi | रहे rahe
काम kaam | कर kar | बंद band | हो ho | गया gaya | गई gayi | गयी gayi | गए gaye | गये gaye | आ aa | जाता jata
जाती jati | होता hota | होती hoti | कट kat | बताओ batao | बताइए bataiye | बताइये bataiye | चाहिए chahiye
चाहिये chahiye | दीजिए dijiye | दीजिये dijiye | करो karo | होगा hoga | जाएगा jayega | हैंग hang | शिफ्ट shift
शिफ़्ट shift | रहता rehta | रहती rehti | हूँ hoon | हूं hoon | नाम naam | जल jal
बहुत bahut | धीमा dheema | धीमी dheemi | धीरे dheere | कमज़ोर kamzor | कमजोर kamzor | ठीक theek | सही sahi
बार baar | अभी abhi | अब ab | भी bhi | बिलकुल bilkul | बिल्कुल bilkul
सुबह subah | शाम shaam | रात raat | कल kal | आज aaj | से se | दिन din | हफ्ते hafte | हफ़्ते hafte | घंटे ghante
दोपहर dopahar | पिछले pichle | तक tak | कब kab
घर ghar | में mein | पर par | पे pe | ऊपर upar | नीचे neeche | कमरे kamre | कमरा kamra | वाले wale | वाला wala
एक ek | दो do | तीन teen | चार char | पाँच paanch | पांच paanch
क्या kya | और aur | लेकिन lekin | का ka | की ki | के ke | को ko | जी ji | हाँ haan | हां haan
मदद help | कृपया please | धन्यवाद thank you | शुक्रिया thanks | समस्या problem | दिक्कत problem
"""


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


TABLE: dict[str, str] = {_nfc(word): latin for line in _TABLE_TEXT.strip().splitlines()
                         for word, latin in (pair.strip().split(" ", 1) for pair in line.split("|"))}


def has_devanagari(text: str) -> bool:
    return bool(_WORD.search(text))


def romanise(text: str) -> str:
    """The known Devanagari words in Latin letters (Devanagari digits as digits, the danda as a full
    stop); the text as given when it holds no Devanagari word the table knows."""
    if not isinstance(text, str) or not has_devanagari(text):
        return text
    out = _nfc(text)
    known = 0
    for spelt, latin in _PHRASES.items():
        known += out.count(_nfc(spelt))
        out = out.replace(_nfc(spelt), latin)

    def word(m: re.Match[str]) -> str:
        nonlocal known
        latin = TABLE.get(m.group(0))
        known += latin is not None
        return m.group(0) if latin is None else latin

    out = _WORD.sub(word, out)
    if not known:
        return text
    return out.translate(_DIGITS).replace("॥", ".").replace("।", ".")
