import { useCallback, useEffect, useState } from "react";
import { ApiError, c, call } from "./api";

type Stats = { exists: boolean; nodes: Record<string, number>; edges: Record<string, number>; memory_mb: number | null;
  slowlog: { at: number; command: string; query: string; ms: number }[] };
type Index = { label: string; properties: string[]; types: Record<string, string[]>; status: string };
type Q = { query: string; tenant: string; ok: boolean; rows: number; ms: number; at_ms: number };
type Plan = { query: string; cypher: string; plan: string[] };

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

function QueryDrawer() {
  const [queries, setQueries] = useState<Q[]>([]);
  const [plan, setPlan] = useState<Plan | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const reload = useCallback(() => { call<{ queries: Q[] }>(c("/queries")).then((r) => setQueries([...r.queries].reverse())); }, []);
  useEffect(() => { reload(); const i = window.setInterval(reload, 2000); return () => clearInterval(i); }, [reload]);
  const explain = async (name: string) => {
    setProblem(null);
    try { setPlan(await call<Plan>(c(`/queries/${encodeURIComponent(name)}/plan`))); }
    catch (e) { setProblem(e instanceof ApiError ? e.message : String(e)); }
  };
  return (
    <section className="card drawer" data-testid="query-drawer">
      <h3>Query drawer <span className="muted small">the last queries the gateway ran on this tenant, newest first</span></h3>
      <div className="two">
        <table className="small"><thead><tr><th>at</th><th>query</th><th>ms</th><th>rows</th><th /></tr></thead>
          <tbody>{queries.slice(0, 60).map((q, i) => (
            <tr key={i} data-testid="query" className={q.ok ? "" : "bad"}>
              <td>{new Date(q.at_ms).toLocaleTimeString()}</td><td><code>{q.query}</code></td>
              <td className="num">{q.ms.toFixed(1)}</td><td className="num">{q.rows}</td>
              <td><button onClick={() => explain(q.query)}>EXPLAIN</button></td></tr>))}</tbody></table>
        <div>
          {problem && <p className="problem">{problem}</p>}
          {plan ? (
            <div data-testid="plan"><h4>{plan.query}</h4><pre className="plan">{plan.plan.join("\n")}</pre>
              <details><summary>Cypher</summary><pre>{plan.cypher}</pre></details></div>
          ) : <p className="muted">EXPLAIN a query to see its plan.</p>}
        </div>
      </div>
    </section>
  );
}
