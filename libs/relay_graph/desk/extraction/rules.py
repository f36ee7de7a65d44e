"""The rules extractor: what the intake agent understands of a message when there is no LLM.

Deterministic regular expressions and small word lists, no I/O. It is built to be careful rather
than clever: a fact it is unsure of is left out (the agent can ask), and every value goes through
the predicate registry's checks, so "my router is slow" never files "slow" as a router. What it
reads, it reads per clause, so "I no longer live in Pune and we moved to Mumbai" ends one fact
and starts another; questions and "if ..." sentences assert nothing."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from relay_graph.memory.entities import name_key
from relay_graph.desk.extraction import lexicon as lx
from relay_graph.desk.extraction.gazetteer import Known, fold_text, known_names
from relay_graph.desk.extraction.language import language_hint
from relay_graph.desk.extraction.port import ExtractionContext
from relay_graph.desk.extraction.schema import (
    ExtractedFact, Extraction, Intent, IssueKind, ProblemReport, checked_fact,
)
from relay_graph.desk.extraction.timehints import TIME_RE, normalise
from relay_graph.desk.extraction.clauses import (
    Clause, EMPTY, MAX_FACTS, Sentence, THIRD_PARTY_POSSESSIVE, prepare_text, someone_elses,
    split_sentences, third_party,
)
from relay_graph.desk.extraction.topics import (
    ENDED_AFTER, HAVE_PLAN, HOME_IS, LEFT, LIVE, MOVED_FROM, MOVED_TO, MOVING_TO, NEGATED_BEFORE, NOT_IN,
    OFF_PLAN, ON_PLAN, OWNERSHIP_ENDED, PLAN_IS, REPLACED, ROUTER_IS, ROUTER_WORD, SWITCHED_FROM,
    SWITCHED_TO, WANT_PLAN, city_at, devices_in, model_code_in, plan_at, router_from_phrase, router_in,
)
from relay_graph.desk.extraction.contacts import (
    CONTACT_PREFER, CONTACT_REFUSED, CONTACT_SAID, EMAIL, NAME_BEFORE, NAME_LOOSE, NAME_STRICT,
    NOT_PHONE_CONTEXT, PHONE, PHONE_CONTEXT, SIGN_OFF, contact_method, name_tokens, old_contact,
)
from relay_graph.desk.extraction.signals import (
    ASK_VERB, FIXED, GREETING, KIND_RANK, LABELS, MOVE_WORDS, NEG_SYMPTOM_BEFORE, NOT_FIXED, OFF_TOPIC,
    PLACE, PLAN_WORDS, SOMEONE_ELSE, SOMEONE_ELSE_ASK, STATUS, SYMPTOMS, WIFI, WIRED,
)

# ---------------------------------------------------------------------------------------------
# The extractor.


@dataclass
class _Found:
    facts: list[ExtractedFact] = field(default_factory=list)
    planned: list[ExtractedFact] = field(default_factory=list)
    move_said: bool = False
    plan_change_said: bool = False

    def add(self, predicate: str, obj: str | None, *, hint: str | None = None, ended: bool = False,
            planned: bool = False) -> None:
        if not obj:
            return
        fact = checked_fact(predicate, obj, hint=hint, ended=ended)
        if fact is None:
            return
        bucket = self.planned if planned else self.facts
        if len(bucket) >= MAX_FACTS:
            return
        key = (fact.predicate, name_key(fact.object), fact.ended)
        for i, f in enumerate(bucket):
            if (f.predicate, name_key(f.object), f.ended) == key:
                if fact.valid_from_hint and not f.valid_from_hint:
                    bucket[i] = fact
                return
        # the same value said to be both true and ended in one message: the later reading wins
        bucket[:] = [f for f in bucket if (f.predicate, name_key(f.object)) != (fact.predicate, name_key(fact.object))]
        bucket.append(fact)


def _hint(clause: str, symptoms: bool) -> str | None:
    """A time said in the clause, for facts; not when the clause is about a problem ("slow since
    monday" dates the problem, not the TV)."""
    if symptoms:
        return None
    m = TIME_RE.search(clause)
    return normalise(m.group(0)) if m else None


_WINDOW = 80  # how far around a match the readers look: bounded, so long messages stay linear


def _before(text: str, i: int) -> str:
    return text[max(0, i - _WINDOW) : i]


def _after(text: str, i: int) -> str:
    return text[i : i + _WINDOW]


def _has_symptom(text: str) -> bool:
    return any(kind is not IssueKind.OTHER and rx.search(text) for kind, rx in SYMPTOMS)


class RulesExtractor:
    """The no-LLM Extractor: same port and schema as the LLM adapter will have."""

    async def extract(self, text: str, context: ExtractionContext) -> Extraction:
        return self.extract_now(text, context)

    def extract_now(self, text: str, context: ExtractionContext | None = None) -> Extraction:
        ctx = context or EMPTY
        known = known_names(ctx.cities, ctx.plans, ctx.routers)
        body = prepare_text(text)
        sentences = split_sentences(body)
        found = _Found()
        for sent in sentences:
            for clause in sent.clauses:
                self._clause(known, clause, found)
        for sent in sentences:
            _model_beside(sent.text, found)
        self._names(known, body, sentences, found)
        self._contact(body, sentences, found)
        problem = self._problem(known, body, sentences)
        about_else = self._someone_else(sentences)
        intent = self._intent(body, sentences, found, problem, about_else)
        return Extraction(
            facts=found.facts,
            planned=found.planned,
            problem=problem,
            intent=intent,
            about_someone_else=about_else,
            language_hint=language_hint(body),
        )

    # -- facts, one clause at a time ------------------------------------------------------------

    def _clause(self, known: Known, clause: Clause, found: _Found) -> None:
        text = clause.text
        symptoms = _has_symptom(text)
        hint = _hint(text, symptoms)
        if MOVE_WORDS.search(text) or MOVING_TO.search(text):
            found.move_said = True
        if PLAN_WORDS.search(text):
            found.plan_change_said = True
        if clause.question and (known.plans.find_all(text) or re.search(r"\b(?:plans?|mbps|gbps)\b", text, re.I)):
            found.plan_change_said = True  # "do you have Fiber 1000 in Pune?"
        if clause.conditional:
            return
        if clause.asserts:
            self._lives(known, text, hint, found)
            self._plans(known, text, hint, found)
            self._routers(known, text, hint, found)
            self._owned(known, text, hint, found)
        elif clause.request:
            self._plan_requests(known, text, hint, found)

    def _lives(self, known: Known, text: str, hint: str | None, found: _Found) -> None:
        for m in LIVE.finditer(text):
            pre = m.group("pre")
            if not re.match(r"(?:i|we)\b", pre, re.I) and third_party(_before(text, m.start()) + pre):
                continue
            hit = city_at(known, text, m.end())
            if not hit:
                continue
            pre = m.group("pre").lower()
            ended = bool(re.search(r"\b(?:no\s+longer|used\s+to|not|never)\b|n't", pre)) or bool(
                ENDED_AFTER.match(_after(text, hit[1]))
            )
            if m.group("verb").lower() in ("lived", "resided") and not re.search(r"(?:'ve|have|has|been)\s+$", pre):
                ended = True
            found.add("lives_in", hit[0], hint=hint, ended=ended)
        for rx in (HOME_IS,):
            for m in rx.finditer(text):
                if third_party(_before(text, m.start())):
                    continue
                hit = city_at(known, text, m.end())
                if hit:
                    found.add("lives_in", hit[0], hint=hint)
        for m in NOT_IN.finditer(text):
            hit = city_at(known, text, m.end(), scan=False)
            if hit and (re.search(r"no\s+longer", m.group(0), re.I) or ENDED_AFTER.match(_after(text, hit[1]))):
                found.add("lives_in", hit[0], hint=hint, ended=True)
        for m in MOVED_TO.finditer(text):
            prefix = _before(text, m.start())
            if third_party(prefix) or NEGATED_BEFORE.search(prefix):
                continue
            hit = city_at(known, text, m.end())
            if not hit:
                continue
            found.move_said = True
            found.add("lives_in", hit[0], hint=hint)
            back = re.match(r"\s+from\s+(?:the\s+)?", _after(text, hit[1]), re.I)
            if back:
                old = city_at(known, text, hit[1] + back.end(), scan=False)
                if old:
                    found.add("lives_in", old[0], hint=hint, ended=True)
        for m in MOVED_FROM.finditer(text):
            if third_party(_before(text, m.start())) or NEGATED_BEFORE.search(_before(text, m.start())):
                continue
            old = city_at(known, text, m.end(), scan=False)
            if not old:
                continue
            found.move_said = True
            found.add("lives_in", old[0], hint=hint, ended=True)
            to = re.match(r"\s*(?:,\s*)?(?:to|into)\s+", _after(text, old[1]), re.I)
            if to:
                new = city_at(known, text, old[1] + to.end())
                if new:
                    found.add("lives_in", new[0], hint=hint)
        for m in LEFT.finditer(text):
            hit = known.cities.match_at(text, m.end())
            if hit and not NEGATED_BEFORE.search(_before(text, m.start() + len(m.group(0)))):
                found.move_said = True
                found.add("lives_in", hit[1], hint=hint, ended=True)
        for m in MOVING_TO.finditer(text):
            prefix = _before(text, m.start())
            if third_party(prefix) or NEGATED_BEFORE.search(prefix + m.group(0)[:-3]):
                continue
            hit = city_at(known, text, m.end())
            if not hit:
                continue
            found.move_said = True
            # "after moving to Pune" happened; "moving to Pune next month" has not yet
            found.add("lives_in", hit[0], hint=hint, planned=not m.group("pre"))

    def _plans(self, known: Known, text: str, hint: str | None, found: _Found) -> None:
        taken: list[int] = []

        def take(rx: re.Pattern[str], *, ended: bool = False, planned: bool = False) -> None:
            for m in rx.finditer(text):
                if m.end() in taken or third_party(_before(text, m.start())):
                    continue
                hit = plan_at(known, text, m.end())
                if not hit:
                    continue
                taken.append(m.end())
                end_of_plan = hit[1]
                is_ended = ended or bool(ENDED_AFTER.match(_after(text, end_of_plan)))
                if planned or rx is SWITCHED_TO or rx is SWITCHED_FROM:
                    found.plan_change_said = True
                found.add("on_plan", hit[0], hint=hint, ended=is_ended, planned=planned and not is_ended)
                if rx is SWITCHED_FROM:
                    to = re.match(r"\s*(?:,\s*)?(?:to|onto)\s+(?:the\s+|a\s+)?", _after(text, end_of_plan), re.I)
                    if to:
                        new = plan_at(known, text, end_of_plan + to.end())
                        if new:
                            taken.append(end_of_plan + to.end())
                            found.add("on_plan", new[0], hint=hint)

        take(OFF_PLAN, ended=True)
        take(SWITCHED_FROM, ended=True)
        take(SWITCHED_TO)
        take(WANT_PLAN, planned=True)
        take(ON_PLAN)
        take(PLAN_IS)
        take(HAVE_PLAN)

    def _plan_requests(self, known: Known, text: str, hint: str | None, found: _Found) -> None:
        for m in WANT_PLAN.finditer(text):
            hit = plan_at(known, text, m.end())
            if hit:
                found.plan_change_said = True
                found.add("on_plan", hit[0], hint=hint, planned=True)

    def _routers(self, known: Known, text: str, hint: str | None, found: _Found) -> None:
        rep = REPLACED.search(text)
        if rep:
            old = router_in(known, rep.group("old"), router_word_near=True)
            new = router_in(known, rep.group("new"), router_word_near=True)
            if old or new:
                for _, _, name in old:
                    found.add("has_router", name, hint=hint, ended=True)
                for _, _, name in new:
                    found.add("has_router", name, hint=hint)
                return
        near = bool(ROUTER_WORD.search(text))
        for m in ROUTER_IS.finditer(text):
            if third_party(_before(text, m.start())) or someone_elses(_before(text, m.start())):
                continue
            name = router_from_phrase(known, _after(text, m.end()))
            if name:
                found.add("has_router", name, hint=None if _has_symptom(text) else hint)
        for start, _end, name in router_in(known, text, router_word_near=near):
            prefix = _before(text, start)
            if someone_elses(prefix):
                continue
            ended = bool(OWNERSHIP_ENDED.search(prefix)) or bool(ENDED_AFTER.match(_after(text, _end)))
            found.add("has_router", name, hint=hint, ended=ended)

    def _owned(self, known: Known, text: str, hint: str | None, found: _Found) -> None:
        rep = REPLACED.search(text)
        for d in devices_in(known, text):
            prefix = _before(text, d.start)
            if someone_elses(prefix, household_ok=True):
                continue
            ended = bool(OWNERSHIP_ENDED.search(prefix)) or bool(ENDED_AFTER.match(_after(text, d.end)))
            if rep and rep.start("old") <= d.start < rep.end("old"):
                ended = True
            found.add("owns_device", d.device, hint=hint, ended=ended)

    # -- whole-message readings -----------------------------------------------------------------

    def _names(self, known: Known, body: str, sentences: list[Sentence], found: _Found) -> None:
        for sent in sentences:
            if sent.conditional:
                continue
            for clause in sent.clauses:
                if clause.question:
                    continue
                text = clause.text
                name = None
                m = NAME_LOOSE.search(text)
                if m:
                    name = name_tokens(text, m.end(), strict=False)
                else:
                    for m in NAME_STRICT.finditer(text):
                        name = name_tokens(text, m.end(), strict=True)
                        if name:
                            break
                    if not name and (m := NAME_BEFORE.match(text.strip())):
                        name = name_tokens(m.group("n"), 0, strict=True)
                if name and not self._not_a_name(known, name):
                    found.add("name", name)
                    return
        m = SIGN_OFF.search(body.strip())
        if m:
            name = name_tokens(m.group("n"), 0, strict=True)
            if name and not self._not_a_name(known, name):
                found.add("name", name)

    @staticmethod
    def _not_a_name(known: Known, name: str) -> bool:
        key = name_key(fold_text(name))
        if key in known.city_keys or key in lx.ROUTER_BRANDS or key in lx.DEVICES or known.plans.match_at(name, 0):
            return True
        return any(w in lx.NAME_STOP for w in key.split()[:1])

    def _contact(self, body: str, sentences: list[Sentence], found: _Found) -> None:
        preferred: str | None = None
        said: str | None = None
        for sent in sentences:
            if sent.conditional:
                continue
            # questions carry contact details only as requests ("can you call me on ...?")
            if sent.question and not sent.request:
                continue
            text = sent.text
            for m in EMAIL.finditer(text):
                if THIRD_PARTY_POSSESSIVE.search(text[max(0, m.start() - 40) : m.start()]):
                    continue
                found.add("email", m.group(0).rstrip("."), ended=old_contact(text, m.start(), m.end()))
            phone_words = bool(PHONE_CONTEXT.search(text))
            for m in PHONE.finditer(text):
                before = text[max(0, m.start() - 40) : m.start()]
                if THIRD_PARTY_POSSESSIVE.search(before):
                    continue
                digits = re.sub(r"\D", "", m.group(0))
                if NOT_PHONE_CONTEXT.search(before[-25:]):
                    continue
                if re.fullmatch(r"\d{4}-\d{2}-\d{2}", m.group(0).strip()):
                    continue
                if m.group(0).startswith("+") or phone_words or len(digits) >= 10:
                    found.add("phone", m.group(0), ended=old_contact(text, m.start(), m.end()))
            for m in CONTACT_REFUSED.finditer(text):
                found.add("prefers_contact", "phone", ended=True)
            for rx in CONTACT_PREFER:
                for m in rx.finditer(text):
                    if NEGATED_BEFORE.search(_before(text, m.start())) and not re.search(r"prefer", m.group(0), re.I):
                        continue
                    preferred = preferred or contact_method(m.group("m"))
            for rx, method in CONTACT_SAID:
                for m in rx.finditer(text):
                    if re.search(r"(?:\b(?:don't|do\s+not|never|not|stop|no)\s+|n't\s+)$", _before(text, m.start()), re.I):
                        continue
                    if method == "phone" and re.match(r"\s+[A-Z][a-z]", _after(text, m.end())) and not re.match(
                        r"\s+(?:on|at|back|tomorrow|today|later|after|before|between|in|when|if|anytime|any\s+time)\b",
                        _after(text, m.end()), re.I,
                    ):
                        continue  # "call me Al" is a name, not a preference
                    said = said or method
        choice = preferred or said
        if choice:
            found.add("prefers_contact", choice)

    def _problem(self, known: Known, body: str, sentences: list[Sentence]) -> ProblemReport | None:
        kinds: list[IssueKind] = []
        where: list[Clause] = []  # the clauses that name a symptom, in order
        for sent in sentences:
            if sent.conditional:
                continue  # "if it gets slow again ..." reports nothing
            for clause in sent.clauses:
                text = clause.text
                if FIXED.search(text) and not NOT_FIXED.search(text):
                    continue  # "it works now", "not slow anymore": a confirmation, not a report
                for kind, rx in SYMPTOMS:
                    for m in rx.finditer(text):
                        before = _before(text, m.start())
                        if NEG_SYMPTOM_BEFORE.search(before) or ENDED_AFTER.match(_after(text, m.end())):
                            continue
                        if kind is IssueKind.OTHER and re.search(r"\bno\s+$", before, re.I):
                            continue  # "no problem"
                        if kind not in kinds:
                            kinds.append(kind)
                        if clause not in where:
                            where.append(clause)
                        break
        if not kinds:
            return None
        kinds.sort(key=KIND_RANK.__getitem__)
        if len(kinds) > 1 and IssueKind.OTHER in kinds:
            kinds.remove(IssueKind.OTHER)
        if IssueKind.INTERMITTENT in kinds and IssueKind.WIFI_DROPS not in kinds and any(WIFI.search(c.text) for c in where):
            kinds[kinds.index(IssueKind.INTERMITTENT)] = IssueKind.WIFI_DROPS  # "keeps disconnecting from the wifi"
            kinds.sort(key=KIND_RANK.__getitem__)
        kind = kinds[0]
        billing = kind in (IssueKind.BILLING_DOUBLE_CHARGE, IssueKind.PAYMENT_FAILED)
        medium = None if billing else "wifi" if WIFI.search(body) else "wired" if WIRED.search(body) else None
        # details said with the symptom win; then details said elsewhere, except beside a move or
        # plan change ("we moved last week" dates the move, not the fault)
        others = [c for s in sentences if not s.conditional for c in s.clauses if c not in where and not (
            MOVED_TO.search(c.text) or SWITCHED_TO.search(c.text) or MOVING_TO.search(c.text) or MOVED_FROM.search(c.text))]
        place = time = device = None
        for clause in where + others:
            if place is None and (pm := PLACE.search(clause.text)):
                place = pm.group("p").lower()
            if time is None and (tm := TIME_RE.search(clause.text)):
                time = normalise(tm.group(0))
            if device is None and (hits := devices_in(known, clause.text)):
                device = hits[0].device
        summary = LABELS[kind]
        if medium == "wifi" and kind in (IssueKind.SLOW_SPEED, IssueKind.NO_CONNECTION, IssueKind.INTERMITTENT):
            summary += " on Wi-Fi"
        if kind is IssueKind.OTHER:
            summary += ": " + where[0].text[:200]
        details = [d for d in (place, time, f"on the {device}" if device else None) if d]
        if details:
            summary += ", " + ", ".join(details)
        return ProblemReport(kind=kind, also=kinds[1:], medium=medium, place=place, time=time, device=device,
                             summary=summary[:300])

    def _someone_else(self, sentences: list[Sentence]) -> bool:
        for sent in sentences:
            if SOMEONE_ELSE.search(sent.text):
                return True
            asking = sent.question or sent.request or bool(ASK_VERB.search(sent.text))
            if asking and SOMEONE_ELSE_ASK.search(sent.text):
                return True
        return False

    def _intent(self, body: str, sentences: list[Sentence], found: _Found, problem: ProblemReport | None,
                about_else: bool) -> Intent:
        not_fixed = any(NOT_FIXED.search(s.text) and not s.conditional for s in sentences)
        # a question says nothing is fixed: "which plan is good for gaming?", "any plan that's fine for two?"
        fixed = any(FIXED.search(s.text) and not s.conditional and not s.question and not NOT_FIXED.search(s.text)
                    for s in sentences)
        # Confirmations first: "still slow upstairs" answers "is it fixed?". With no ticket awaiting
        # an answer the caller treats CONFIRM_NOT_FIXED as a report (the problem is filled in).
        if not_fixed:
            return Intent.CONFIRM_NOT_FIXED
        if fixed and not problem:
            return Intent.CONFIRM_FIXED
        asking = any(s.question or s.request for s in sentences)
        if STATUS.search(body) and (asking or re.search(r"\b(?:update|status)\b", body, re.I)):
            return Intent.ASK_STATUS
        if problem:
            return Intent.REPORT_PROBLEM
        if about_else and not (found.facts or found.planned):
            return Intent.OTHER
        if found.move_said:
            return Intent.MOVE
        if found.plan_change_said or any(f.predicate == "on_plan" for f in found.planned):
            return Intent.PLAN_CHANGE
        if found.facts or found.planned:
            return Intent.GIVE_INFO
        if OFF_TOPIC.search(body):
            return Intent.OFF_TOPIC
        if all(GREETING.match(s.text) for s in sentences) and sentences:
            return Intent.GREETING
        return Intent.OTHER


def _model_beside(sentence: str, found: _Found) -> None:
    """"It's a JioFiber router, model JCOW414": the model said in its own clause joins the maker
    named in the sentence (a router fact without a model code of its own)."""
    code = model_code_in(sentence)
    if code is None:
        return
    for i, f in enumerate(found.facts):
        if f.predicate == "has_router" and not f.ended and code.lower() not in f.object.lower() \
                and not re.search(r"\d", f.object):
            better = checked_fact("has_router", f"{f.object} {code}", hint=f.valid_from_hint)
            if better is not None:
                found.facts[i] = better
            return


def extract(text: str, context: ExtractionContext | None = None) -> Extraction:
    """The rules extractor as a plain function (what the async port method runs)."""
    return _RULES.extract_now(text, context)


_RULES = RulesExtractor()
