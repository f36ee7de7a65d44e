"""The one normal form of a name (`entities.name_key`, README "Names"), in every script: names one
combining mark apart stay two names, NFKC and full case folding make one name of what is one,
joiners and emoji follow their stated rules, and ASCII names keep the keys the older rule gave."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings, strategies as st

from tests.old_names import old_name_key
from relay_graph.memory.entities import close_names, name_key, name_words, search_text

# Pairs one combining mark apart (a vowel sign, a vowel point, a tone mark) or one letter whose
# only difference is a mark. The older rule made one key of each pair.
ONE_MARK_APART = [
    ("devanagari", "आशा राव", "आशी राव"),  # vowel sign AA / II (Mc)
    ("devanagari", "राम", "रामा"),  # a vowel sign more
    ("devanagari", "सुनील", "सुनिल"),  # long / short i
    ("tamil", "கமலா", "கமலி"),  # vowel sign AA / I (Mc)
    ("tamil", "சுகுமார்", "சுகுமார"),  # the pulli (virama, Mn)
    ("bengali", "রাজু", "রাজা"),  # vowel sign U (Mn) / AA (Mc)
    ("thai", "มานี", "มานิ"),  # sara II / sara I (Mn)
    ("thai", "กิ่ง", "กิง"),  # tone mark mai ek (Mn)
    ("arabic", "سَمِير", "سُمِير"),  # fatha / damma
    ("arabic", "سَمِير", "سمير"),  # with and without harakat: two spellings, two keys
    ("hebrew", "שָׂרָה", "שֶׂרָה"),  # qamats / segol
    ("hebrew", "דָּוִד", "דָוִד"),  # dagesh
    ("cjk", "はな", "ばな"),  # the voiced mark (composed by NFKC)
    ("cjk", "カナ", "ガナ"),
    ("latin", "Zoë", "Zoe"),  # an accent is a letter's, like a vowel sign
    ("latin", "n\u0331ame", "name"),  # a mark with no precomposed letter (n + macron below)
]


@pytest.mark.parametrize("script, a, b", ONE_MARK_APART, ids=[f"{s}-{a}" for s, a, _ in ONE_MARK_APART])
def test_names_one_mark_apart_are_two_keys(script, a, b):
    ka, kb = name_key(a), name_key(b)
    assert ka and kb and ka != kb
    # the key is one word per word of the name: a mark never breaks a word
    assert len(name_words(a)) == len(a.split()) and len(name_words(b)) == len(b.split())


@pytest.mark.parametrize("script, a, b", ONE_MARK_APART, ids=[f"{s}-{a}" for s, a, _ in ONE_MARK_APART])
def test_the_key_keeps_every_mark_of_the_name(script, a, b):
    marks = [c for c in unicodedata.normalize("NFKC", a) if unicodedata.category(c).startswith("M")]
    kept = [c for c in name_key(a) if unicodedata.category(c).startswith("M")]
    assert kept == marks


@pytest.mark.parametrize("a, b", [
    # NFKC: full-width and half-width forms, ligatures, compatibility digits, decomposed letters
    ("ＡＬＩＣＥ　ＲＡＯ", "alice rao"),
    ("ﬁona ﬂores", "fiona flores"),
    ("ﾊﾞﾅﾅ", "バナナ"),
    ("は\u3099な", "ばな"),
    ("Jose\u0301", "josé"),
    ("customer ①②", "customer 12"),
    ("क\u093c", "\u0958"),  # nukta: NFKC's one form of QA
    # case folding (full): sharp s, final sigma, Cherokee; Turkish dotted capital I as case folding
    # does (i + combining dot above), which is not the plain i
    ("STRASSE", "straße"),
    ("ΟΔΥΣΣΕΥΣ", "οδυσσευς"),
    ("ὈΔΥΣΣΕΎΣ", "ὀδυσσεύσ"),
    ("İSTANBUL", "i̇stanbul"),
    # spacing: any run of Unicode spaces is one space, none at the ends
    ("  asha\t\n rao ", "asha rao"),
    ("asha\u00a0rao", "asha rao"),
    ("आशा\u3000राव", "आशा राव"),
    ("asha\u2003rao", "asha rao"),
    # joiners and other default-ignorables go: they change how letters are drawn, not which
    ("क्\u200dष", "क्ष"),
    ("क्\u200cष", "क्ष"),
    ("می\u200cخواهم", "میخواهم"),
    ("\u200fسمير\u200e", "سمير"),
    ("as\u00adha", "asha"),
    ("สมชาย\u200bใจดี", "สมชายใจดี"),
    # emoji are symbols: a space, with their modifiers, selectors and joiners
    ("Asha 🌸 Rao", "asha rao"),
    ("Asha👍🏽Rao", "asha rao"),
    ("❤️ asha", "asha"),
    ("1️⃣ asha", "asha"),
    ("🇮🇳 asha rao", "asha rao"),
    # punctuation: apostrophes of every kind are a space; hyphens of every kind are "-"; a dot
    # inside a word stays, at its edge it goes
    ("O'Neil", "o neil"),
    ("O’Neil", "o neil"),
    ("Anne\u2010Marie", "anne-marie"),
    ("Anne\u2011Marie", "anne-marie"),
    ("Anne－Marie", "anne-marie"),
    ("Dr. A. B.", "dr a b"),
    ("«आशा»", "आशा"),
    ("\u0301asha", "asha"),  # a mark with no letter under it goes
    ("asha !\u0301 rao", "asha rao"),
])
def test_one_name_however_it_is_written(a, b):
    assert name_key(a) == name_key(b)


@pytest.mark.parametrize("a, b", [
    ("i̇stanbul", "istanbul"),  # the dot case folding leaves on İ is a mark, and marks count
    ("ıstanbul", "istanbul"),  # dotless i is its own letter
    ("anne-marie", "anne marie"),
    ("alice.rao@example.in", "alicerao@example.in"),
    ("+91 98450 12345", "91 98450 12345"),
    ("oʼneil", "o neil"),  # U+02BC is a letter (Ukrainian, Hawaiian), not an apostrophe
])
def test_what_still_tells_names_apart(a, b):
    assert name_key(a) != name_key(b)


def test_a_name_of_emoji_or_joiners_only_has_no_key():
    for name in ("👩\u200d💻", "🌸🌸", "\u200d\u200c", "\u0301", "!!"):
        assert name_key(name) == ""  # writes answer 400: no letters or digits


def test_reads_offer_a_name_one_mark_apart_but_never_as_the_same_name():
    assert search_text("आशा राव") == "%आशा% %राव%"  # whole words, marks and all
    close = close_names("आशा राव", [("u1", "आशी राव"), ("u2", "प्रिया रमन")])
    assert [uid for _, uid, _ in close] == ["u1"]  # "did you mean आशी राव?"
    assert close[0][0] < 1.0 and name_key("आशा राव") != name_key("आशी राव")


# ASCII names keep exactly the keys the rule before gave (tests/old_names.py), so the migration
# looks only at names with a character the rules treat differently (name_migration.CHANGED).
@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x7F)))
def test_ascii_names_keep_the_keys_they_had(name):
    assert name_key(name) == old_name_key(name)


@settings(max_examples=1000, deadline=None)
@given(st.text())
def test_the_normal_form_is_its_own_normal_form(name):
    key = name_key(name)
    assert name_key(key) == key
    assert key == key.strip() and "  " not in key
