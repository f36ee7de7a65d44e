"""Tools over the memory bands: episodes, facts with their two clocks, claims, recall, and what
the graph knows about one customer."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from relay_graph.runtime import times
from relay_graph.desk.customers import store as customers
from relay_graph.desk.network import store as network
from relay_graph.desk.tickets import store as tickets
from relay_graph.memory import facts
from relay_graph.runtime import udf
from relay_graph.memory.entity_refs import find_entity
from relay_graph.memory.entities import name_key
from relay_graph.runtime.errors import NotFound
from relay_graph.memory.models import (
    ClaimsView,
    Clock,
    FactInput,
    FactView,
    FactWriteResult,
    RecallItem,
    RecallShape,
    RetireInput,
    TurnInput,
    utcnow,
)
from relay_graph.desk.network.models import Outage
from relay_graph.usecases import episodes as episode_cases, facts as fact_cases
from relay_graph.desk.tickets.models import TicketSummary
from relay_graph.usecases.context import Call
from relay_graph.tools.envelope import Shape, ToolResult, when
from relay_graph.tools.explain import FactExplanation, explain_facts
from relay_graph.tools.toolset import tool
from relay_graph.tools.resolve import Resolver
from relay_graph.memory.inputs import text_type
from relay_graph.tools.types import Args, CustomerName, Identifier, Lax, Name, Predicate, Time, whole

# ---------------------------------------------------------------- how_i_know lines


def fact_line(f: FactView) -> str:
    state = "" if f.state.value == "current" else f", {f.state.value}"
    return (f"fact {f.fact_id}: {f.subject} {f.predicate} = {f.object} "
            f"(recorded {when(f.recorded_at)} by {f.asserted_by}{state})")


def item_line(i: RecallItem) -> str:
    return f"episode {i.episode_id} in session {i.session}: " + " > ".join(i.path)


def ticket_line(t: TicketSummary) -> str:
    owner = f", owner {t.owner}" if t.owner else ""
    return f"ticket {t.id}: {t.issue}, stage {t.stage.value} (updated {when(t.updated_at)}{owner})"


def outage_line(o: Outage) -> str:
    return f"outage {o.outage_id} on {o.node_id} ({o.node_kind.value} {o.node_name}), opened {when(o.opened_at)}"


_RECALL_SHAPES = {
    RecallShape.PATH: Shape.ANSWERED,
    RecallShape.MEMORY: Shape.MEMORY,
    RecallShape.NOT_IN_GRAPH: Shape.NOT_IN_GRAPH,
    RecallShape.UNKNOWN_NAME: Shape.UNKNOWN_NAME,
}


def _shape(found: bool) -> Shape:
    return Shape.ANSWERED if found else Shape.NOT_IN_GRAPH


# ---------------------------------------------------------------- remember


class RememberInput(Args):
    episodes: list[TurnInput] = Field(min_length=1, max_length=500,
                                      description="turns or notes, each as POST /episodes takes them")

    @model_validator(mode="before")
    @classmethod
    def _grouped(cls, data: Any) -> Any:
        """The earlier shape, kept until v2 (deprecated): {"session", "turns": [{"speaker", "text", "at"?,
        "id"?}], "customer"?, "mentions"?, "kind"?}: each turn takes the group's session and the rest."""
        if not isinstance(data, dict) or "turns" not in data or "episodes" in data:
            return data
        group = {k: data[k] for k in ("session", "customer", "mentions", "kind") if k in data}
        rest = set(data) - {"turns", *group}
        if rest or not isinstance(data["turns"], list):
            return data  # refused as it stands, with the field errors of the current shape
        return {"episodes": [{**group, **t} if isinstance(t, dict) else t for t in data["turns"]]}


class RememberOutput(BaseModel):
    session: str = Field(description="the first episode's session (deprecated: see `sessions`)")
    sessions: list[str]
    customer: str | None
    episode_ids: list[str]


@tool("remember", """Store turns or notes of a conversation (any conversation) as episodes, embedded for
      recall; the same body as POST /episodes. Written down by you (the calling agent).""",
      input=RememberInput, output=RememberOutput, writes=True)
async def remember(ctx: Call, args: RememberInput) -> ToolResult:
    now = utcnow()  # a write: each customer exactly the key given (write_episodes MERGEs it)
    ids = await episode_cases.write_episodes(ctx, [t.to_episode(ctx.agent, now) for t in args.episodes])
    sessions = list(dict.fromkeys(t.session for t in args.episodes))
    customers = list(dict.fromkeys(t.customer for t in args.episodes if t.customer))
    return ToolResult(tool="remember", shape=Shape.ANSWERED,
                      data=RememberOutput(session=sessions[0], sessions=sessions,
                                          customer=customers[0] if len(customers) == 1 else None, episode_ids=ids),
                      how_i_know=[f"episode {i} in session {t.session} written by {ctx.agent}"
                                  for i, t in zip(ids, args.episodes)])


# ---------------------------------------------------------------- facts


class RememberFactInput(Args):
    subject: CustomerName
    predicate: Predicate
    object: Name = Field(description="the value, e.g. 'pune' for lives_in")
    valid_from: Time | None = Field(default=None, description="when it became true in the world; default now")
    source: Identifier | None = Field(default=None,
                               description="the episode id it was learnt from (linked as DERIVED)")


class RememberFactOutput(FactWriteResult):
    subject: str
    predicate: str
    object: str
    asserted_by: str


@tool("remember_fact", """Assert subject · predicate · object as the calling agent. A repeat corroborates,
      a new value supersedes the old one, and on a contested predicate another agent's different value
      opens a conflict instead (see claims).""", input=RememberFactInput, output=RememberFactOutput, writes=True)
async def remember_fact(ctx: Call, args: RememberFactInput) -> ToolResult:
    # A write: exactly the subject given (an unknown one is new), never a customer spelt alike.
    ref = await find_entity(ctx.client, ctx.tenant, args.subject, "Customer")
    subject = ref.name if ref is not None else args.subject
    result = await fact_cases.write_fact(ctx, FactInput(
        subject=subject, predicate=args.predicate, object=args.object, agent=ctx.agent, label=ctx.label,
        valid_from=args.valid_from, source=args.source), embed=True)
    out = RememberFactOutput(**result.model_dump(), subject=subject, predicate=args.predicate,
                             object=args.object, asserted_by=ctx.agent)
    how = [f"fact {result.fact_id}: {subject} {args.predicate} = {args.object} "
           f"({result.outcome.value}, asserted by {ctx.agent})"]
    how += [f"fact {result.fact_id} SUPERSEDES fact {old}" for old in result.superseded]
    if result.conflict_id:
        how.append(f"conflict {result.conflict_id} is open on {subject} {args.predicate}")
    return ToolResult(tool="remember_fact", shape=Shape.ANSWERED, data=out, how_i_know=how)


MAX_FACTS = 1_000


class RememberFactsInput(Args):
    facts: list[RememberFactInput] = Field(min_length=1, max_length=MAX_FACTS)


class FactItemError(BaseModel):
    code: str
    message: str


class FactItemResult(BaseModel):
    """One fact's answer: its write result, or the error that kept it from being written."""

    result: FactWriteResult | None = None
    error: FactItemError | None = None


class RememberFactsOutput(BaseModel):
    results: list[FactItemResult] = Field(description="one per fact, in order")
    written: int
    failed: int
    asserted_by: str


@tool("remember_facts", f"""Assert many facts at once (at most {MAX_FACTS}) as the calling agent, the
      batched write path: one result per fact, in order, as remember_fact answers it. Each fact is atomic:
      one the engine refuses (say, a value its predicate does not allow) is answered with its error in its
      slot and nothing of it is written; the others are. Names are written exactly as given.""",
      input=RememberFactsInput, output=RememberFactsOutput, writes=True)
async def remember_facts(ctx: Call, args: RememberFactsInput) -> ToolResult:
    items = [FactInput(subject=f.subject, predicate=f.predicate, object=f.object, agent=ctx.agent, label=ctx.label,
                       valid_from=f.valid_from, source=f.source) for f in args.facts]
    results = await fact_cases.write_facts_each(ctx, items, embed=True)
    out, how = [], []
    for item, r in zip(args.facts, results):
        if isinstance(r, FactWriteResult):
            out.append(FactItemResult(result=r))
            how.append(f"fact {r.fact_id}: {item.subject} {item.predicate} = {item.object} "
                       f"({r.outcome.value}, asserted by {ctx.agent})")
        else:
            out.append(FactItemResult(error=FactItemError(code=r.code, message=r.message)))
    written = sum(1 for o in out if o.result is not None)
    return ToolResult(tool="remember_facts", shape=Shape.ANSWERED,
                      data=RememberFactsOutput(results=out, written=written, failed=len(out) - written,
                                               asserted_by=ctx.agent),
                      how_i_know=how)


class RetireFactInput(Args):
    subject: CustomerName
    predicate: Predicate
    object: Name | None = Field(default=None, description="for a multi-valued predicate: which value ended")
    valid_to: Time | None = Field(default=None, description="when it stopped being true, not in the future (422); default now. A time before the fact began ends it where it began")
    source: Identifier | None = Field(default=None,
                               description="the episode id that said it ended")


class RetireFactOutput(BaseModel):
    subject: str
    predicate: str
    retired: list[str]


@tool("retire_fact", """End what is current for a subject's predicate (one value of a multi-valued one,
      with object), on both clocks. Nothing is deleted: it stays in history.""",
      input=RetireFactInput, output=RetireFactOutput, writes=True)
async def retire_fact(ctx: Call, args: RetireFactInput) -> ToolResult:
    res = Resolver(ctx)
    subject = await res.write_subject(args.subject, "subject")
    res.done()
    assert subject is not None
    retired = await fact_cases.retire_fact(ctx, RetireInput(
        subject=subject.name, predicate=args.predicate, object=args.object, agent=ctx.agent,
        valid_to=args.valid_to, source=args.source))
    return ToolResult(tool="retire_fact", shape=_shape(bool(retired)),
                      data=RetireFactOutput(subject=subject.name, predicate=args.predicate, retired=retired),
                      how_i_know=[f"fact {i} retired by {ctx.agent}" for i in retired],
                      message=None if retired else "nothing current to retire")


class FactsAtInput(Args):
    subject: CustomerName
    predicate: Predicate | None = Field(default=None, description="one predicate; default all but those the turn rules file (comes_from, does, has_pet, knows, mentioned, visited), which are asked for by name")
    as_of: Time | None = Field(default=None, description="a moment; default: what is current now")
    clock: Annotated[Clock, Lax] = Field(default=Clock.WORLD, description="world: what was true in the world at "
                                         "as_of; belief: what we had on file at as_of")


class FactsOutput(BaseModel):
    subject: str
    as_of: datetime | None = None
    clock: Clock = Clock.WORLD
    facts: list[FactView]


@tool("facts_at", """A subject's facts: what is current now, or with as_of what was true in the world
      (clock=world) or what we had on file (clock=belief) at that time.""", input=FactsAtInput, output=FactsOutput)
async def facts_at(ctx: Call, args: FactsAtInput) -> ToolResult:
    res = Resolver(ctx)
    subject = await res.customer(args.subject, "subject")
    res.done()
    assert subject is not None
    found = await facts.read_facts(ctx.client, ctx.tenant, subject.name, args.predicate, as_of=args.as_of,
                                   clock=args.clock, reader=ctx.agent)
    return ToolResult(tool="facts_at", shape=_shape(bool(found)),
                      data=FactsOutput(subject=subject.name, as_of=args.as_of, clock=args.clock, facts=found),
                      how_i_know=[fact_line(f) for f in found])


class HistoryInput(Args):
    subject: CustomerName
    predicate: Predicate | None = None


@tool("history", """Every version of a subject's facts in world order: current, superseded and retired,
      late-arriving corrections included.""", input=HistoryInput, output=FactsOutput)
async def history(ctx: Call, args: HistoryInput) -> ToolResult:
    res = Resolver(ctx)
    subject = await res.customer(args.subject, "subject")
    res.done()
    assert subject is not None
    found = await facts.history(ctx.client, ctx.tenant, subject.name, args.predicate)
    return ToolResult(tool="history", shape=_shape(bool(found)),
                      data=FactsOutput(subject=subject.name, facts=found), how_i_know=[fact_line(f) for f in found])


class ClaimsInput(Args):
    subject: CustomerName
    predicate: Predicate


class ClaimsOutput(ClaimsView):
    subject: str
    predicate: str


@tool("claims", """Every agent's claim for one value (a subject's predicate), best first: the writing
      agent's trust for that predicate, then the newest. conflict_id is the open conflict, if any.""",
      input=ClaimsInput, output=ClaimsOutput)
async def claims(ctx: Call, args: ClaimsInput) -> ToolResult:
    res = Resolver(ctx)
    subject = await res.customer(args.subject, "subject")
    res.done()
    assert subject is not None
    view = await facts.claims(ctx.client, ctx.tenant, subject.name, args.predicate, reader=ctx.agent)
    how = [f"fact {c.fact_id}: {subject.name} {args.predicate} = {c.object} (claimed by {c.asserted_by}, "
           f"trust {c.trust:.2f}, recorded {when(c.recorded_at)})" for c in view.claims]
    if view.conflict_id:
        how.append(f"conflict {view.conflict_id} is open")
    return ToolResult(tool="claims", shape=_shape(bool(view.claims)),
                      data=ClaimsOutput(**view.model_dump(), subject=subject.name, predicate=args.predicate),
                      how_i_know=how)


# ---------------------------------------------------------------- recall and ask


class RecallInput(Args):
    q: text_type(2_000) = Field(description="the question or topic")  # type: ignore[valid-type]
    k: whole(1, 100) = Field(default=10, description="how many episodes")
    subject: Name | None = Field(default=None, description="only what is about this customer or entity")
    session: Identifier | None = Field(default=None, description="only this conversation")


class RecallOutput(BaseModel):
    recall_shape: RecallShape = Field(description="path | memory | not_in_graph | unknown_name")
    subject: str | None = None
    items: list[RecallItem]
    facts: list[FactView]


@tool("recall", """The episodes that matter to a question, each with the path that found it (named
      entities, sessions, meaning), and the current facts linked to them.""", input=RecallInput, output=RecallOutput)
async def recall(ctx: Call, args: RecallInput) -> ToolResult:
    subject = None
    if args.subject is not None:
        res = Resolver(ctx)
        ref = await res.entity(args.subject, "subject")
        res.done()
        assert ref is not None
        subject = ref.name
    result = await ctx.memory.recall(ctx.tenant, args.q, k=args.k, subject=subject, session=args.session,
                                     reader=ctx.agent)
    return ToolResult(tool="recall", shape=_RECALL_SHAPES[result.shape],
                      data=RecallOutput(recall_shape=result.shape, subject=subject, items=result.items,
                                        facts=result.facts),
                      how_i_know=[fact_line(f) for f in result.facts] + [item_line(i) for i in result.items])


class AskInput(Args):
    question: text_type(2_000)  # type: ignore[valid-type]
    customer: CustomerName | None = Field(default=None, description="ask about this customer only")
    k: whole(1, 50) = Field(default=5)


class AskOutput(BaseModel):
    question: str
    customer: str | None
    answer: str | None = Field(description="the best-supported answer, from a fact if one fits, else an episode")
    answered_from: Literal["fact", "episode"] | None
    learnt: str | None = Field(default=None, description="how long ago the answering fact was learnt (\"3 days ago\")")
    facts: list[FactView]
    episodes: list[RecallItem]


def _fact_sentence(f: FactView) -> str:
    # relay.sentence (udf.py) words it the same in the database; this one serves a fact gone since.
    since = f" since {when(f.valid_from)}" if f.valid_from else ""
    return f"{f.subject} {f.predicate.replace('_', ' ')} {f.object}{since} (on file from {f.asserted_by})"


def _learnt(f: FactView, now_ms: int) -> str:
    # relay.ago words it the same in the database; this one serves a fact gone since.
    return udf.ago(times.ms_of(f.recorded_at), now_ms)


@tool("ask", """Answer a question from memory: recall (with the customer as subject, if given) and the
      facts it connects, with the best-supported answer and where it came from.""",
      input=AskInput, output=AskOutput)
async def ask(ctx: Call, args: AskInput) -> ToolResult:
    customer = None
    if args.customer is not None:
        res = Resolver(ctx)
        ref = await res.customer(args.customer)
        res.done()
        assert ref is not None
        customer = ref.name
    result = await ctx.memory.recall(ctx.tenant, args.question, k=args.k, subject=customer, reader=ctx.agent)
    shape = _RECALL_SHAPES[result.shape]
    answer, source = None, None
    learnt = None
    if result.facts:
        top = result.facts[0]
        now_ms = times.now_ms()
        worded = (await facts.sentences(ctx.client, ctx.tenant, [top], now_ms=now_ms)).get(top.fact_id)
        sentence, learnt = (worded.sentence, worded.learnt) if worded else (_fact_sentence(top), _learnt(top, now_ms))
        answer, source = f"{sentence}, learnt {learnt}", "fact"
    elif result.items:
        top = result.items[0]
        answer, source = f"{top.speaker} said: {top.text}", "episode"
    how = [fact_line(f) for f in result.facts] + [item_line(i) for i in result.items]
    message = None if answer else "nothing in memory answers this"
    return ToolResult(tool="ask", shape=shape if answer else Shape.NOT_IN_GRAPH,
                      data=AskOutput(question=args.question, customer=customer, answer=answer, answered_from=source,
                                     learnt=learnt, facts=result.facts, episodes=result.items),
                      how_i_know=how, message=message)


# ---------------------------------------------------------------- explain


class ExplainInput(Args):
    # fact_id, or subject and predicate, never both: stated in the schema as _one_way checks it
    model_config = ConfigDict(extra="forbid", json_schema_extra={"oneOf": [
        {"required": ["fact_id"], "properties": {"fact_id": {"type": "string"}, "subject": {"type": "null"},
                                                 "predicate": {"type": "null"}}},
        {"required": ["subject", "predicate"], "properties": {"subject": {"type": "string"},
                                                             "predicate": {"type": "string"},
                                                             "fact_id": {"type": "null"}}},
    ]})
    fact_id: Identifier | None = Field(default=None, description="the fact to explain")
    subject: CustomerName | None = Field(default=None, description="or: the subject whose value to explain")
    predicate: Predicate | None = None
    object: Name | None = Field(default=None, description="with subject: only this value")

    @model_validator(mode="after")
    def _one_way(self) -> "ExplainInput":
        if self.fact_id is None and (self.subject is None or self.predicate is None):
            raise ValueError("give fact_id, or subject and predicate")
        if self.fact_id is not None and (self.subject is not None or self.predicate is not None):
            raise ValueError("give fact_id or subject and predicate, not both")
        return self


class ExplainOutput(BaseModel):
    explanations: list[FactExplanation]


@tool("explain", """How we know a fact: who wrote it, the episode(s) it was DERIVED from, what it
      superseded and what superseded it, the conflict it stands in, who consulted it. By fact_id, or the
      current value and open claims of a subject's predicate.""", input=ExplainInput, output=ExplainOutput)
async def explain(ctx: Call, args: ExplainInput) -> ToolResult:
    if args.fact_id is not None:
        ids = [args.fact_id]
    else:
        res = Resolver(ctx)
        subject = await res.customer(args.subject or "", "subject")
        res.done()
        assert subject is not None and args.predicate is not None
        view = await facts.claims(ctx.client, ctx.tenant, subject.name, args.predicate)
        wanted = name_key(args.object) if args.object is not None else None
        ids = [c.fact_id for c in view.claims if wanted is None or name_key(c.object) == wanted]
        if not ids:
            return ToolResult(tool="explain", shape=Shape.NOT_IN_GRAPH, data=ExplainOutput(explanations=[]),
                              message=f"nothing current on file for {subject.name} {args.predicate}")
    explanations, how = await explain_facts(ctx, ids, fact_argument="fact_id" if args.fact_id else None)
    return ToolResult(tool="explain", shape=Shape.ANSWERED, data=ExplainOutput(explanations=explanations),
                      how_i_know=how)


# ---------------------------------------------------------------- one customer


class RecallCustomerInput(Args):
    customer: CustomerName


class RecallCustomerOutput(BaseModel):
    customer: str
    facts: list[FactView]
    open_tickets: list[TicketSummary]
    open_outages: list[Outage]
    open_conflicts: list[str] = Field(description="conflicts still open on this customer's facts")


@tool("recall_customer", """Everything current about one customer: their facts, their open tickets and the
      open outages that reach them.""", input=RecallCustomerInput, output=RecallCustomerOutput)
async def recall_customer(ctx: Call, args: RecallCustomerInput) -> ToolResult:
    res = Resolver(ctx)
    ref = await res.customer(args.customer)
    res.done()
    assert ref is not None
    name = ref.name
    current = await facts.read_facts(ctx.client, ctx.tenant, name, reader=ctx.agent)
    open_tickets = await tickets.open_tickets_for(ctx.client, ctx.tenant, name)
    try:
        outages = await network.open_outages_for_customer(ctx.client, ctx.tenant, name)
    except NotFound:  # known to the graph, but not as a connected customer
        outages = []
    conflicts = sorted({f.conflict_id for f in current if f.conflict_id})
    how = ([fact_line(f) for f in current] + [ticket_line(t) for t in open_tickets]
           + [outage_line(o) for o in outages] + [f"conflict {c} is open" for c in conflicts])
    return ToolResult(tool="recall_customer", shape=_shape(bool(how)),
                      data=RecallCustomerOutput(customer=name, facts=current, open_tickets=open_tickets,
                                                open_outages=outages, open_conflicts=conflicts),
                      how_i_know=how)


class FindCustomersInput(Args):
    name: Name = Field(description="the name to look for, e.g. 'Priya Raman'")


@tool("find_customers", """The customers called a name: every customer whose current name is exactly it
      (two people may share one; each has their own id), else those of the one name on file spelt alike
      (`matched` says which). When two or more different names are that close, the answer is `ambiguous`:
      it lists them and picks none.""", input=FindCustomersInput, output=customers.CustomersAnswer)
async def find_customers(ctx: Call, args: FindCustomersInput) -> ToolResult:
    answer = await customers.find(ctx.client, ctx.tenant, args.name)
    if answer.ambiguous is not None:
        return ToolResult(tool="find_customers", shape=Shape.AMBIGUOUS, data=answer,
                          ambiguous=[answer.ambiguous], message=answer.ambiguous.message)
    how = [f"customer {c.id}: name {', '.join(c.names) or '(none on file)'}" for c in answer.customers]
    return ToolResult(tool="find_customers", shape=_shape(bool(answer.customers)), data=answer, how_i_know=how,
                      matched=[answer.matched] if answer.matched else [],
                      message=None if answer.customers else f"no customer called {args.name!r}")
