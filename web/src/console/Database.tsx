import { useCallback, useEffect, useState } from "react";
import { ApiError, c, call, qs } from "./api";

type Stats = { exists: boolean; nodes: Record<string, number>; edges: Record<string, number>; memory_mb: number | null;
  slowlog: { at: number; command: string; query: string; ms: number }[] };
type Index = { label: string; properties: string[]; types: Record<string, string[]>; status: string };
type Q = { id: string; query: string; tenant: string; process: string; ok: boolean; rows: number; ms: number; at_ms: number;
  read_only: boolean; profilable: boolean; kept_parameters: boolean };
type Plan = { query: string; cypher: string; plan: string[]; process?: string; parameters?: Record<string, unknown> };

const sorted = (m: Record<string, number>) => Object.entries(m).sort((a, b) => b[1] - a[1]);

export function Database() {
  const [db, setDb] = useState<{ stats: Stats; indexes: Index[] } | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => { call<{ stats: Stats; indexes: Index[] }>(c("/database")).then(setDb).catch((e) => setProblem(String(e.message ?? e))); }, []);
  return (
    <div className="database">
      {problem && <p className="problem">{problem}</p>}
      {db && (
        <div className="grid3">
          <section className="card"><h3>Nodes by label</h3>
            <table data-testid="node-counts"><tbody>{sorted(db.stats.nodes).map(([k, v]) => <tr key={k}><td>{k}</td><td className="num">{v}</td></tr>)}</tbody></table>
          </section>
          <section className="card"><h3>Edges by type</h3>
            <table data-testid="edge-counts"><tbody>{sorted(db.stats.edges).map(([k, v]) => <tr key={k}><td>{k}</td><td className="num">{v}</td></tr>)}</tbody></table>
          </section>
          <section className="card"><h3>Memory</h3>
            <p data-testid="memory-mb"><b>{db.stats.memory_mb?.toFixed(2) ?? "—"}</b> MB (GRAPH.MEMORY USAGE)</p>
            <h3>Indexes</h3>
            <table data-testid="indexes"><tbody>{db.indexes.map((i) => (
              <tr key={i.label + i.properties.join()}><td>{i.label}</td><td>{i.properties.map((p) => `${p} (${(i.types[p] ?? []).join("/")})`).join(", ")}</td><td className="muted">{i.status}</td></tr>))}</tbody></table>
          </section>
          <section className="card wide"><h3>Slow log</h3>
            <table data-testid="slowlog"><tbody>{db.stats.slowlog.map((s, i) => (
              <tr key={i}><td className="num">{s.ms.toFixed(2)} ms</td><td><code>{s.query.slice(0, 160)}</code></td></tr>))}</tbody></table>
            {!db.stats.slowlog.length && <p className="muted">Empty.</p>}
          </section>
        </div>
      )}
      <QueryDrawer />
    </div>
  );
}

const PROCESSES = ["every process", "gateway", "intake", "resolver", "netops"];

function QueryDrawer() {
  const [queries, setQueries] = useState<Q[]>([]);
  const [plan, setPlan] = useState<(Plan & { how: "EXPLAIN" | "PROFILE" }) | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [only, setOnly] = useState(PROCESSES[0]);
  const reload = useCallback(() => { call<{ queries: Q[] }>(c("/queries")).then((r) => setQueries([...r.queries].reverse())); }, []);
  useEffect(() => { reload(); const i = window.setInterval(reload, 2000); return () => clearInterval(i); }, [reload]);
  const show = async (how: "EXPLAIN" | "PROFILE", q: Q) => {
    setProblem(null);
    try {
      const path = how === "EXPLAIN" ? `/queries/${encodeURIComponent(q.query)}/plan${q.kept_parameters ? qs({ run: q.id }) : ""}`
        : `/queries/runs/${encodeURIComponent(q.id)}/profile`;
      setPlan({ ...(await call<Plan>(c(path))), how });
    } catch (e) { setProblem(e instanceof ApiError ? e.message : String(e)); }
  };
  const shown = queries.filter((q) => only === PROCESSES[0] || q.process === only);
  return (
    <section className="card drawer" data-testid="query-drawer">
      <h3>Query drawer <span className="muted small">the last queries every process (the gateway and the agents) ran on this tenant, newest first</span></h3>
      <p className="row small"><label htmlFor="qprocess">Show</label>
        <select id="qprocess" value={only} onChange={(e) => setOnly(e.target.value)}>{PROCESSES.map((p) => <option key={p}>{p}</option>)}</select></p>
      <div className="two">
        <table className="small"><thead><tr><th>at</th><th>process</th><th>query</th><th>ms</th><th>rows</th><th><span className="sr-only">plans</span></th></tr></thead>
          <tbody>{shown.slice(0, 80).map((q) => (
            <tr key={q.id} data-testid="query" data-id={q.id} data-process={q.process} className={q.ok ? "" : "bad"}>
              <td>{new Date(q.at_ms).toLocaleTimeString()}</td><td>{q.process}</td><td><code>{q.query}</code></td>
              <td className="num">{q.ms.toFixed(1)}</td><td className="num">{q.rows}</td>
              <td><button onClick={() => show("EXPLAIN", q)} aria-label={`EXPLAIN ${q.query}`}>EXPLAIN</button>{" "}
                {q.profilable && <button onClick={() => show("PROFILE", q)} aria-label={`PROFILE ${q.query}`}>PROFILE</button>}</td></tr>))}</tbody></table>
        <div>
          {problem && <p className="problem">{problem}</p>}
          {plan ? (
            <div data-testid="plan" data-how={plan.how}><h4>{plan.how} {plan.query}{plan.process ? <span className="muted small"> · as {plan.process} ran it</span> : null}</h4>
              <pre className="plan">{plan.plan.join("\n")}</pre>
              {plan.parameters && <details><summary>Parameters</summary><pre>{JSON.stringify(plan.parameters, null, 2)}</pre></details>}
              <details><summary>Cypher</summary><pre>{plan.cypher}</pre></details></div>
          ) : <p className="muted">EXPLAIN a query to see its plan; PROFILE a read to run it again with its parameters and see each operation's records and time.</p>}
        </div>
      </div>
    </section>
  );
}
