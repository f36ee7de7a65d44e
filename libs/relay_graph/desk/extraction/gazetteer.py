"""Names the desk knows (cities, plans, routers, devices), found in text word by word, whatever
the case, accents or separators the customer used."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from relay_graph.memory.entities import TOKEN, fold_accents, name_key
from relay_graph.desk.extraction import lexicon as lx


_TOKEN = TOKEN  # a word keeps its marks: "पुणे" is one word, not "प" and "ण"
_GAP = re.compile(r"[\s!-]*")
_SPELLINGS = {"fibre": "fiber"}


def _norm_token(tok: str) -> str:
    t = fold_text(tok).casefold()
    return _SPELLINGS.get(t, t)


@lru_cache(maxsize=256)
def _tokens(text: str) -> tuple[tuple[tuple[int, int, str], ...], dict[int, int]]:
    toks = tuple((m.start(), m.end(), _norm_token(m.group(0))) for m in _TOKEN.finditer(text))
    return toks, {t[0]: i for i, t in enumerate(toks)}


class Gazetteer:
    """Known names matched word by word: case, accents, "fibre"/"fiber" and the separators between
    words ("TP-Link", "tp link", "tplink") do not matter; the longest name wins ("New Delhi" over
    "Delhi"). Word-indexed, so thousands of catalogue names cost no more than a few."""

    def __init__(self, entries: list[tuple[str, str]]) -> None:
        self._by_first: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        seen: set[tuple[str, ...]] = set()
        for surface, canonical in entries:
            words = tuple(_norm_token(t) for t in _TOKEN.findall(surface))
            if not words:
                continue
            for form in {words, ("".join(words),)}:
                if form not in seen:
                    seen.add(form)
                    self._by_first.setdefault(form[0], []).append((form, canonical))
        for cands in self._by_first.values():
            cands.sort(key=lambda c: -len(c[0]))

    def _match_token(self, text: str, toks: tuple[tuple[int, int, str], ...], i: int) -> tuple[int, str] | None:
        for words, canonical in self._by_first.get(toks[i][2], ()):
            if i + len(words) > len(toks):
                continue
            ok = True
            for k in range(1, len(words)):
                prev, cur = toks[i + k - 1], toks[i + k]
                if cur[2] != words[k] or _GAP.fullmatch(text, prev[1], cur[0]) is None:
                    ok = False
                    break
            if ok:
                return toks[i + len(words) - 1][1], canonical
        return None

    def match_at(self, text: str, pos: int) -> tuple[int, str] | None:
        if not self._by_first:
            return None
        toks, at = _tokens(text)
        i = at.get(pos)
        return None if i is None else self._match_token(text, toks, i)

    def find_all(self, text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int, str]]:
        if not self._by_first:
            return []
        end = len(text) if end is None else end
        toks, _ = _tokens(text)
        out = []
        i = 0
        while i < len(toks):
            s, _e, _w = toks[i]
            if s < start:
                i += 1
                continue
            if s >= end:
                break
            hit = self._match_token(text, toks, i)
            if hit and hit[0] <= end:
                out.append((s, hit[0], hit[1]))
                while i < len(toks) and toks[i][0] < hit[0]:
                    i += 1
                continue
            i += 1
        return out


def fold_text(text: str) -> str:
    """Latin, Greek and Cyrillic accents gone (entities.fold_accents); other scripts' marks kept."""
    return fold_accents(text)


@dataclass(frozen=True)
class Known:
    """Everything the extractor matches names against, built once per catalogue context."""

    cities: Gazetteer
    city_keys: frozenset[str]
    plans: Gazetteer
    plan_names: tuple[str, ...]
    routers: Gazetteer
    brands: Gazetteer
    devices: Gazetteer


@lru_cache(maxsize=64)
def known_names(cities: tuple[str, ...], plans: tuple[str, ...], routers: tuple[str, ...]) -> Known:
    """The catalogue's names plus the built-in fallbacks (catalogue spellings win)."""
    city_entries = [(c, c) for c in cities]
    for canonical, aliases in lx.CITIES.items():
        city_entries.append((canonical, canonical))
        city_entries.extend((a, canonical) for a in aliases)
    keys = frozenset(name_key(fold_text(s)) for s, _ in city_entries)
    return Known(
        cities=Gazetteer(city_entries),
        city_keys=keys,
        plans=Gazetteer([(p, p) for p in plans]),
        plan_names=plans,
        routers=Gazetteer([(r, r) for r in routers]),
        brands=Gazetteer(list(lx.ROUTER_BRANDS.items())),
        # plurals too: "two laptops", "the kids' tablets"
        devices=Gazetteer(list(lx.DEVICES.items()) + [(k + "s", v) for k, v in lx.DEVICES.items() if k[-1].isalpha()]),
    )
