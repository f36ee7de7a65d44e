import Graph from "graphology";
import type Sigma from "sigma";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import {
  ApiError, c, call, currentTenant, live, post, qs, t,
  type Claim, type ClockRow, type ConsoleGraph, type FactView, type Found, type GNode, type OpenConflict, type RecallResult,
  type SearchAnswer,
} from "./api";
import {
  BAND_COLOURS, BANDS, draw, fold, GROUP_PREFIX, isGroup, loadLayout, merge, saveLayout, settle, type Clock, type View,
} from "./graph";

declare global {
  interface Window { relayConsole?: { graph: Graph; sigma: Sigma; mode: () => string } }
}

const SIDES = ["Inspect", "Ask", "Two clocks", "Conflicts"] as const;
type Side = (typeof SIDES)[number];
type Mode = { kind: "whole" } | { kind: "focus"; customer: Found };

const iso = (ms: number) => new Date(ms).toISOString();
const when = (s: string | null | undefined) => (s ? new Date(s).toLocaleString() : "—");
const message = (e: unknown) => (e instanceof ApiError ? e.message : String(e));
const enc = encodeURIComponent;
/** What the reads take for a customer node: its id (the part of its uid after the type). */
export const customerKey = (uid: string) => (uid.includes("|") ? uid.slice(uid.indexOf("|") + 1) : uid);

export function Memory({ admin, focusOn }: { admin: boolean; focusOn?: Found | null }) {
  const box = useRef<HTMLDivElement>(null);
  const graph = useMemo(() => new Graph({ type: "directed", multi: true }), []);
  const sigma = useRef<Sigma | null>(null);
  const [counts, setCounts] = useState({ nodes: 0, edges: 0, total: 0, truncated: false });
  const [up, setUp] = useState(false);
  const [clock, setClock] = useState<Clock>("world");
  const [at, setAt] = useState<number | null>(null); // null: now, following the live feed
  const [path, setPath] = useState<Set<string>>(new Set());
  const [selected, setSelected] = useState<string | null>(null);
  const [side, setSide] = useState<Side>("Inspect");
  const [problem, setProblem] = useState<string | null>(null);
  const [mode, setMode] = useState<Mode>(focusOn ? { kind: "focus", customer: focusOn } : { kind: "whole" });
  const [expanded, setExpanded] = useState<Set<string>>(new Set());
  const unfolded = useRef(expanded);
  unfolded.current = expanded;
  const whole = useRef<ConsoleGraph | null>(null);  // the last whole-tenant answer, unfolded
  const drawn = useRef<string>("");  // what the graph holds: "whole" or "focus:<customer>"
  const focus = mode.kind === "focus" ? mode.customer.node : null;
  const view = useRef<View>({ at, clock, path, selected, focus });
  view.current = { at, clock, path, selected, focus };
  const modeName = mode.kind === "focus" ? `focus:${mode.customer.id}` : "whole";

  useEffect(() => { if (focusOn) setMode({ kind: "focus", customer: focusOn }); }, [focusOn]);

  /** Draws `data` (already folded): a new picture starts clean and settles; a refresh only adds. */
  const show = useCallback((data: ConsoleGraph, name: string, total: number) => {
    const fresh = drawn.current !== name;
    if (fresh) { graph.clear(); drawn.current = name; }
    const layout = name === "whole" ? loadLayout(currentTenant()) : {};
    const placed = Object.keys(layout).length > 0;
    merge(graph, data, layout);
    if (fresh && !placed) settle(graph);
    if (name === "whole") saveLayout(currentTenant(), graph);
    setCounts({ nodes: graph.order, edges: graph.size, total, truncated: data.truncated });
    if (fresh) sigma.current?.getCamera().animatedReset({ duration: 0 });
  }, [graph]);

  const load = useCallback(async () => {
    try {
      if (mode.kind === "focus") {
        const data = await call<ConsoleGraph>(c(`/customers/${enc(mode.customer.id)}/neighbourhood`));
        show(data, modeName, data.nodes.length);
      } else {
        const data = await call<ConsoleGraph>(c("/graph") + qs({ limit: 5000 }));
        whole.current = data;
        show(fold(data, unfolded.current), modeName, data.nodes.length);
      }
    } catch (e) {
      setProblem(message(e));
    }
  }, [mode, modeName, show]);

  // Unfolding a group (or folding them all again) redraws from the answer in hand, no new read.
  useEffect(() => {
    if (mode.kind === "whole" && whole.current) show(fold(whole.current, expanded), "whole", whole.current.nodes.length);
  }, [expanded, mode.kind, show]);

  useEffect(() => {
    if (!box.current) return;
    const s = draw(box.current, graph, () => view.current);
    s.on("clickNode", ({ node }) => {
      if (isGroup(node)) { setExpanded((x) => new Set([...x, node.slice(GROUP_PREFIX.length)])); return; }
      setSelected(node); setSide("Inspect");
    });
    sigma.current = s;
    window.relayConsole = { graph, sigma: s, mode: () => drawn.current };
    return () => { s.kill(); sigma.current = null; };
  }, [graph]);

  useEffect(() => {
    // Every change on the live feed asks for the picture again: at most once per 150 ms, never two
    // answers in flight (a change during a load asks once more after it). Only new nodes are placed.
    let pending: number | null = null;
    let loading = false;
    let again = false;
    const refresh = async () => {
      if (loading) { again = true; return; }
      loading = true;
      await load();
      loading = false;
      if (again) { again = false; refresh(); }
    };
    refresh();
    const stop = live((e) => {
      if (e.kind === "ready" || pending !== null) return;
      pending = window.setTimeout(() => { pending = null; refresh(); }, 150);
    }, setUp);
    return () => { stop(); if (pending !== null) clearTimeout(pending); };
  }, [load]);

  useEffect(() => { sigma.current?.refresh(); }, [at, clock, path, selected, counts, focus]);

  const range = useMemo(() => timeRange(graph), [graph, counts]);
  const node = selected && graph.hasNode(selected) ? (graph.getNodeAttribute(selected, "node") as GNode) : null;
  const goTo = useCallback((id: string) => {
    if (!graph.hasNode(id)) return false;
    setSelected(id); setSide("Inspect");
    const d = sigma.current?.getNodeDisplayData(id);
    if (d) sigma.current?.getCamera().animate({ x: d.x, y: d.y, ratio: 0.6 }, { duration: 300 });
    return true;
  }, [graph]);
  const focusCustomer = useCallback((f: Found) => { setSelected(null); setPath(new Set()); setMode({ kind: "focus", customer: f }); }, []);
  const groups = useMemo(() => [...new Set((whole.current?.nodes ?? []).map((n) => n.group).filter(Boolean))].length, [counts]);

  return (
    <div className="memory">
      <section className="stage">
        <Search onFocus={focusCustomer} />
        {mode.kind === "focus" ? (
          <div className="focusbar" data-testid="focused">
            Focused on <b>{mode.customer.name}</b> <span className="muted small">({mode.customer.id}: facts on both clocks, sessions, tickets, agents, line)</span>{" "}
            <button onClick={() => { setSelected(null); setMode({ kind: "whole" }); }}>Whole tenant</button>
          </div>
        ) : groups > 0 && (
          <div className="focusbar muted small">Network folded by city: click a city to open it.{" "}
            {expanded.size > 0 && <button onClick={() => setExpanded(new Set())}>Fold all</button>}</div>
        )}
        <div className="legend">
          {BANDS.map((b) => <span key={b}><i style={{ background: BAND_COLOURS[b] }} /> {b}</span>)}
          <span className={`dot${up ? " up" : ""}`}>{up ? "live" : "connecting"}</span>
          <span className="muted small" data-testid="graph-counts">{counts.nodes} nodes drawn · {counts.edges} edges
            {mode.kind === "whole" && counts.total !== counts.nodes ? ` (${counts.total} in the tenant)` : ""}{counts.truncated ? " (first 5,000)" : ""}</span>
        </div>
        <div ref={box} className="canvas" data-testid="graph" data-nodes={counts.nodes} data-path={path.size}
          data-mode={mode.kind} data-focus={focus ?? ""} />
        <Replay clock={clock} setClock={setClock} at={at} setAt={setAt} range={range} />
        {problem && <p className="problem">{problem}</p>}
      </section>
      <aside className="side">
        <nav className="tabs" aria-label="Memory panels">
          {SIDES.map((s) => <button key={s} className={`tab${s === side ? " on" : ""}`} onClick={() => setSide(s)}>{s}</button>)}
        </nav>
        {side === "Inspect" && <Inspect node={node} graph={graph} admin={admin} goTo={goTo} onFocus={focusCustomer} />}
        {side === "Ask" && <Ask graph={graph} admin={admin} onPath={setPath} />}
        {side === "Two clocks" && <TwoClocks node={node} graph={graph} at={at} admin={admin} />}
        {side === "Conflicts" && <Conflicts admin={admin} goTo={goTo} onFocus={focusCustomer} />}
      </aside>
    </div>
  );
}

/** Find a customer by name, id, phone or ticket: one found by exact means is focused; a name spelt
 * alike is offered ("did you mean"), several are listed; none is guessed. */
function Search({ onFocus }: { onFocus: (f: Found) => void }) {
  const [q, setQ] = useState("");
  const [answer, setAnswer] = useState<SearchAnswer | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const find = async (e: React.FormEvent) => {
    e.preventDefault();
    setProblem(null); setAnswer(null);
    try {
      const r = await call<SearchAnswer>(c("/search") + qs({ q }));
      if (r.how !== "fuzzy" && r.customers.length === 1) { onFocus(r.customers[0]); setAnswer(null); return; }
      setAnswer(r);
    } catch (err) { setProblem(message(err)); }
  };
  return (
    <div className="search">
      <form onSubmit={find} role="search">
        <input aria-label="Find a customer" value={q} onChange={(e) => setQ(e.target.value)}
          placeholder="Find a customer: name, id, phone or ticket" />
        <button type="submit" disabled={!q.trim()}>Find</button>
      </form>
      {problem && <p className="warn small">{problem}</p>}
      {answer && (
        <div className="found" data-testid="search-answer" data-how={answer.how}>
          {answer.customers.length === 0 ? <p className="muted small">No customer matches “{answer.asked}”.</p> : (
            <>
              <p className="small">{answer.how === "fuzzy" ? <>No customer is called “{answer.asked}”. Did you mean:</> : <>{answer.customers.length} customers match “{answer.asked}”:</>}</p>
              <ul>{answer.customers.map((f) => (
                <li key={f.node}><button className="link" data-testid="search-hit" onClick={() => { setAnswer(null); onFocus(f); }}>{f.name}</button>
                  <span className="muted small"> {f.id} · {f.why}</span></li>))}</ul>
            </>
          )}
        </div>
      )}
    </div>
  );
}

function timeRange(g: Graph): [number, number] {
  let lo = Date.now();
  g.forEachNode((_, a) => {
    const n = a.node as GNode;
    for (const v of [n.valid_from_ms, n.recorded_at_ms, n.at_ms]) if (v !== null && v < lo) lo = v;
  });
  return [lo, Date.now()];
}

function Replay({ clock, setClock, at, setAt, range }: {
  clock: Clock; setClock: (c: Clock) => void; at: number | null; setAt: (t: number | null) => void; range: [number, number];
}) {
  const [text, setText] = useState("");
  const [lo, hi] = range;
  const value = at ?? hi;
  return (
    <div className="replay" data-testid="replay">
      <label>Clock{" "}
        <select value={clock} onChange={(e) => setClock(e.target.value as Clock)} aria-label="Clock">
          <option value="world">valid time: what was true then</option>
          <option value="belief">learnt time: what we had on file then</option>
        </select>
      </label>
      <input type="range" aria-label="Replay" min={lo} max={hi} step={Math.max(1, Math.floor((hi - lo) / 1000))} value={value}
        onChange={(e) => { const v = Number(e.target.value); setAt(v >= hi ? null : v); setText(iso(v)); }} />
      <form onSubmit={(e) => { e.preventDefault(); const v = Date.parse(text); if (!Number.isNaN(v)) setAt(v); }}>
        <input aria-label="Replay instant" value={at === null ? "" : text} placeholder="now (live)"
          onChange={(e) => setText(e.target.value)} />
        <button type="submit">Go</button>
        <button type="button" onClick={() => { setAt(null); setText(""); }} disabled={at === null}>Live</button>
      </form>
      <span className="muted small" data-testid="replay-at">{at === null ? "now" : `${clock === "world" ? "true in the world" : "on file"} at ${new Date(at).toLocaleString()}`}</span>
    </div>
  );
}

type Explanation = {
  fact: FactView & { corroborations: number; source: string | null };
  written_by: string[];
  derived_from: { episode_id: string; speaker: string | null; text: string | null; at: string | null }[];
  supersedes: { fact_id: string; object: string | null; asserted_by: string | null; valid_from: string | null; valid_to: string | null }[];
  superseded_by: { fact_id: string; object: string | null }[];
  consulted_by: { agent: string; count: number }[];
  conflict: { conflict_id: string; open: boolean } | null;
};

function Inspect({ node, graph, admin, goTo, onFocus }: {
  node: GNode | null; graph: Graph; admin: boolean; goTo: (id: string) => boolean; onFocus: (f: Found) => void;
}) {
  const [why, setWhy] = useState<Explanation | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    setWhy(null); setProblem(null);
    if (!node || node.kind !== "Fact" || admin) return;
    post<{ data: { explanations: Explanation[] } }>(t("/tools/explain"), { fact_id: node.id })
      .then((r) => setWhy(r.data.explanations[0] ?? null)).catch((e) => setProblem(message(e)));
  }, [node?.id, admin]);
  if (!node) return <p className="muted">Click a node to see what it is, who wrote it and where it came from.</p>;
  const around: { id: string; text: string }[] = [];
  graph.forEachOutEdge(node.id, (_, a, _s, tgt) => around.push({ id: tgt, text: `${a.edge.type} → ${graph.getNodeAttribute(tgt, "label")}` }));
  graph.forEachInEdge(node.id, (_, a, src) => around.push({ id: src, text: `${graph.getNodeAttribute(src, "label")} → ${a.edge.type}` }));
  return (
    <div className="inspect" data-testid="inspect" data-kind={node.kind}>
      <h3>{node.kind}: {node.name}</h3>
      <p className="muted small">{node.band} · {node.labels.join(", ")} · {node.id}</p>
      {node.kind === "Customer" && (
        <p><button onClick={() => onFocus({ id: customerKey(node.id), node: node.id, name: node.name, why: "graph" })}>Focus on this customer</button></p>)}
      {why && (
        <dl>
          <dt>What</dt><dd data-testid="what">{why.fact.predicate} = {why.fact.object} ({why.fact.state})</dd>
          <dt>True</dt><dd>{when(why.fact.valid_from)} → {when(why.fact.valid_to)}</dd>
          <dt>On file</dt><dd>{when(why.fact.recorded_at)} → {when(why.fact.expired_at)}</dd>
          <dt>Written by</dt><dd data-testid="written-by">{why.written_by.join(", ") || why.fact.asserted_by}</dd>
          <dt>Source message</dt>
          <dd data-testid="source">{why.derived_from.length ? why.derived_from.map((e) => <q key={e.episode_id}>{e.speaker}: {e.text}</q>) : "written directly (no message)"}</dd>
          <dt>What it replaced</dt>
          <dd data-testid="replaced">{why.supersedes.length ? why.supersedes.map((f) => <span key={f.fact_id}>{f.object} (by {f.asserted_by}, true {when(f.valid_from)} → {when(f.valid_to)}) </span>) : "nothing"}</dd>
          {why.superseded_by.length > 0 && <><dt>Replaced by</dt><dd>{why.superseded_by.map((f) => f.object).join(", ")}</dd></>}
          <dt>Consulted by</dt><dd>{why.consulted_by.map((x) => `${x.agent} ×${x.count}`).join(", ") || "nobody yet"}</dd>
          {why.conflict && <><dt>Conflict</dt><dd>{why.conflict.conflict_id} ({why.conflict.open ? "open" : "settled"})</dd></>}
        </dl>
      )}
      {node.kind === "Fact" && admin && <p className="muted small">Explaining a fact needs the tenant's key.</p>}
      {problem && <p className="problem">{problem}</p>}
      <h4>Around it</h4>
      <ul className="around" data-testid="around">{around.slice(0, 30).map((a, i) => (
        <li key={i}><button className="link" onClick={() => goTo(a.id)}>{a.text}</button></li>))}</ul>
    </div>
  );
}

function Ask({ graph, admin, onPath }: { graph: Graph; admin: boolean; onPath: (p: Set<string>) => void }) {
  const [q, setQ] = useState("");
  const [answer, setAnswer] = useState<RecallResult | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const ask = async (e: React.FormEvent) => {
    e.preventDefault();
    setProblem(null);
    try {
      const r = await call<RecallResult>(t("/recall") + qs({ q, k: 5 }));
      setAnswer(r);
      onPath(pathOf(graph, r));
    } catch (err) { setProblem(message(err)); }
  };
  if (admin) return <p className="muted">Asking needs the tenant's key.</p>;
  return (
    <div className="ask">
      <form onSubmit={ask}>
        <input aria-label="Question" value={q} onChange={(e) => setQ(e.target.value)} placeholder="where does Asha live?" />
        <button type="submit" disabled={!q.trim()}>Recall</button>
        <button type="button" onClick={() => { setAnswer(null); onPath(new Set()); }}>Clear</button>
      </form>
      {problem && <p className="problem">{problem}</p>}
      {answer && (
        <div data-testid="answer" data-shape={answer.shape}>
          {answer.facts.length > 0 && <ul>{answer.facts.map((f) => <li key={f.fact_id} data-testid="answer-fact">{f.predicate}: <b>{f.object}</b></li>)}</ul>}
          <ol>{answer.items.map((i) => (
            <li key={i.episode_id} data-testid="answer-item"><q>{i.speaker}: {i.text}</q>
              <div className="path muted small">{i.path.join(" → ")}</div></li>))}</ol>
          {!answer.items.length && !answer.facts.length && <p className="muted">Nothing in memory answers that.</p>}
        </div>
      )}
    </div>
  );
}

/** The nodes recall's answer passed through: its episodes and facts, the facts' subjects, and the entities its paths name. */
function pathOf(g: Graph, r: RecallResult): Set<string> {
  const ids = new Set<string>();
  const names = new Set<string>();
  for (const i of r.items) {
    ids.add(i.episode_id);
    for (const step of i.path) for (const m of step.matchAll(/'([^']+)'/g)) names.add(m[1].toLowerCase());
  }
  for (const f of r.facts) { ids.add(f.fact_id); ids.add(f.subject); }
  const out = new Set<string>();
  g.forEachNode((id, a) => {
    const n = a.node as GNode;
    if (ids.has(id) || (n.band !== "episodic" && n.kind !== "Fact" && names.has(n.name.toLowerCase()))) out.add(id);
  });
  return out;
}

function TwoClocks({ node, graph, at, admin }: { node: GNode | null; graph: Graph; at: number | null; admin: boolean }) {
  // The reads take a subject by name (or a customer's id): a fact's subject is read by its name.
  const owner = node?.kind === "Fact" && node.subject && graph.hasNode(node.subject)
    ? (graph.getNodeAttribute(node.subject, "node") as GNode) : node;
  // a customer is read by its id (two may share a name); another subject by its name
  const subject = owner && owner.kind !== "Fact" && owner.band === "semantic"
    ? (owner.kind === "Customer" ? customerKey(owner.id) : owner.name) : null;
  const customer = owner?.kind === "Customer" ? customerKey(owner.id) : null;
  const [world, setWorld] = useState<FactView[] | null>(null);
  const [belief, setBelief] = useState<FactView[] | null>(null);
  const [differ, setDiffer] = useState<ClockRow[] | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    setProblem(null);
    if (!subject || admin) return;
    const asOf = at === null ? undefined : iso(at);
    // The engine's own as-of reads, one per clock.
    Promise.all([
      call<{ facts: FactView[] }>(t("/facts") + qs({ subject, as_of: asOf, clock: "world" })),
      call<{ facts: FactView[] }>(t("/facts") + qs({ subject, as_of: asOf, clock: "belief" })),
    ]).then(([w, b]) => { setWorld(w.facts); setBelief(b.facts); })
      .catch((e) => setProblem(message(e)));
  }, [subject, at, admin]);
  useEffect(() => {
    setDiffer(null);
    if (customer) call<{ rows: ClockRow[] }>(c(`/customers/${enc(customer)}/clocks`)).then((r) => setDiffer(r.rows)).catch((e) => setProblem(message(e)));
  }, [customer]);
  if (admin) return <p className="muted">Reading facts needs the tenant's key.</p>;
  if (!subject) return <p className="muted">Click a customer (or one of its facts), then scrub the replay bar.</p>;
  const list = (facts: FactView[] | null, id: string) => (
    <ul data-testid={id}>{(facts ?? []).map((f) => <li key={f.fact_id} data-predicate={f.predicate}>{f.predicate}: <b className="value">{f.object}</b></li>)}</ul>
  );
  return (
    <div className="clocks">
      <p className="muted small">{subject} · {at === null ? "now" : new Date(at).toLocaleString()}</p>
      <div className="two">
        <div><h4>True in the world</h4>{list(world, "then-world")}</div>
        <div><h4>On file</h4>{list(belief, "then-belief")}</div>
      </div>
      <h4>Where the clocks differ</h4>
      {customer === null ? <p className="muted small">For a customer's facts.</p> : differ === null ? <p className="muted small">Loading…</p>
        : differ.length === 0 ? <p className="muted small" data-testid="clocks-agree">Every fact was learnt when it became true.</p> : (
          <table className="small" data-testid="clocks-differ"><tbody>{differ.map((r) => (
            <tr key={r.fact_id} data-testid="clock-row" data-kind={r.kind} data-predicate={r.predicate}>
              <td><b>{r.predicate}: {r.object}</b></td><td>{r.sentence}</td></tr>))}</tbody></table>)}
      {problem && <p className="problem">{problem}</p>}
    </div>
  );
}

function Conflicts({ admin, goTo, onFocus }: { admin: boolean; goTo: (id: string) => boolean; onFocus: (f: Found) => void }) {
  const [open, setOpen] = useState<OpenConflict[] | null>(null);
  const [moved, setMoved] = useState<{ conflict: string; trust: Record<string, number>; before: Record<string, number> } | null>(null);
  const reload = useCallback(() => {
    call<{ conflicts: OpenConflict[] }>(c("/conflicts")).then((r) => setOpen(r.conflicts));
  }, []);
  useEffect(reload, [reload]);
  return (
    <div className="conflicts">
      {moved && (
        <div className="moved" data-testid="trust-moved">Settled {moved.conflict}: trust moved {Object.entries(moved.trust)
          .map(([a, v]) => `${a} ${moved.before[a]?.toFixed(2) ?? "?"} → ${v.toFixed(2)}`).join(", ")}</div>
      )}
      {open === null ? <p className="muted">Loading…</p> : open.length === 0 ? <p className="muted">No open conflicts.</p> :
        open.map((o) => <OneConflict key={o.conflict_id} conflict={o} admin={admin} goTo={goTo} onFocus={onFocus}
          onSettled={(trust, before) => { setMoved({ conflict: o.conflict_id, trust, before }); reload(); }} />)}
    </div>
  );
}

function OneConflict({ conflict, admin, goTo, onFocus, onSettled }: {
  conflict: OpenConflict; admin: boolean; goTo: (id: string) => boolean; onFocus: (f: Found) => void; onSettled: (trust: Record<string, number>, before: Record<string, number>) => void;
}) {
  const [claims, setClaims] = useState<Claim[]>([]);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    const subject = conflict.subject_name ?? conflict.subject;  // the reads take a name (or a customer's id)
    if (admin || !subject || !conflict.predicate) return;
    call<{ claims: Claim[] }>(t("/claims") + qs({ subject, predicate: conflict.predicate }))
      .then((r) => setClaims([...r.claims].sort((a, b) => b.trust - a.trust))).catch((e) => setProblem(message(e)));
  }, [conflict.conflict_id, admin]);
  const settle = async (fact_id: string) => {
    const before = Object.fromEntries(claims.map((x) => [x.asserted_by, x.trust]));
    try {
      const r = await post<{ trust: Record<string, number> }>(t(`/conflicts/${encodeURIComponent(conflict.conflict_id)}/settle`), { fact_id, by: "console" });
      onSettled(r.trust, before);
    } catch (e) { setProblem(message(e)); }
  };
  return (
    <div className="card" data-testid="conflict">
      <h4>{conflict.subject_name ?? conflict.subject} · {conflict.predicate}{" "}
        {conflict.subject && <button className="link small" onClick={() => {
          const s = conflict.subject!;
          if (!goTo(s) && s.startsWith("Customer|")) onFocus({ id: customerKey(s), node: s, name: conflict.subject_name ?? s, why: "conflict" });
        }}>show on graph</button>}</h4>
      {admin && <p className="muted small">Settling needs the tenant's key.</p>}
      <ol>{claims.map((cl) => (
        <li key={cl.fact_id} data-testid="claim" data-agent={cl.asserted_by}>
          <b>{cl.object}</b> <span className="muted">by {cl.asserted_by}, trust {cl.trust.toFixed(2)}</span>{" "}
          <button onClick={() => settle(cl.fact_id)}>This one is right</button>
        </li>))}</ol>
      {problem && <p className="problem">{problem}</p>}
    </div>
  );
}
