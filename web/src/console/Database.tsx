import { useCallback, useEffect, useState } from "react";
import { ApiError, c, call, qs } from "./api";

type GraphMemory = { graph: string; total_mb: number; parts_mb: Record<string, number> };
type Stats = { exists: boolean; nodes: Record<string, number>; edges: Record<string, number>; memory_mb: number | null;
  slowlog: { at: number; command: string; query: string; ms: number }[]; graphs: GraphMemory[];
  server: { used_bytes: number; dataset_bytes: number | null; peak_bytes: number | null } | null };
type Index = { label: string; properties: string[]; types: Record<string, string[]>; status: string };
type Q = { id: string; query: string; tenant: string; process: string; ok: boolean; rows: number; ms: number; at_ms: number;
  read_only: boolean; profilable: boolean; kept_parameters: boolean; housekeeping: boolean };
type Statement = { query: string; processes: string[]; count: number; errors: number; p50_ms: number; p95_ms: number; max_ms: number;
  housekeeping: boolean; slowest: Q };

/** FalkorDB reports a graph's memory in whole MB: 0 means under one. */
const mb = (v: number) => (v === 0 ? "< 1 MB" : `${v.toFixed(v < 10 ? 1 : 0)} MB`);
const bytes = (v: number) => (v < 1 << 20 ? `${(v / 1024).toFixed(0)} KB` : `${(v / (1 << 20)).toFixed(1)} MB`);
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
            <p data-testid="memory-mb"><b>{db.stats.memory_mb === null ? "—" : mb(db.stats.memory_mb)}</b> this tenant's graph
              <span className="muted small"> (GRAPH.MEMORY USAGE, counted in whole MB)</span></p>
            <table className="memtable small" data-testid="graph-memory"><tbody>{db.stats.graphs.map((g) => (
              <tr key={g.graph}><td>{g.graph}</td><td className="num">{mb(g.total_mb)}</td>
                <td className="muted">{Object.entries(g.parts_mb).filter(([, v]) => v > 0).map(([k, v]) => `${k} ${mb(v)}`).join(", ") || "every part under 1 MB"}</td></tr>))}</tbody></table>
            {db.stats.server && <p className="small" data-testid="server-memory">The server: <b>{bytes(db.stats.server.used_bytes)}</b> in use
              {db.stats.server.dataset_bytes !== null && <>, {bytes(db.stats.server.dataset_bytes)} of it data</>}
              {db.stats.server.peak_bytes !== null && <>, peak {bytes(db.stats.server.peak_bytes)}</>} <span className="muted">(INFO memory, every tenant)</span></p>}
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
  const [summary, setSummary] = useState<Statement[]>([]);
  const [plan, setPlan] = useState<(Plan & { how: "EXPLAIN" | "PROFILE" }) | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [only, setOnly] = useState(PROCESSES[0]);
  const [housekeeping, setHousekeeping] = useState(false);
  const [grouped, setGrouped] = useState(true);
  const reload = useCallback(() => {
    const hk = housekeeping ? "true" : undefined;
    call<{ queries: Q[] }>(c("/queries") + qs({ housekeeping: hk })).then((r) => setQueries([...r.queries].reverse()));
    call<{ statements: Statement[] }>(c("/queries/summary") + qs({ housekeeping: hk })).then((r) => setSummary(r.statements));
  }, [housekeeping]);
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
  const statements = summary.filter((s) => only === PROCESSES[0] || s.processes.includes(only));
  return (
    <section className="card drawer" data-testid="query-drawer">
      <h3>Query drawer <span className="muted small">the queries every process (the gateway and the agents) ran on this tenant</span></h3>
      <p className="row small"><label htmlFor="qprocess">Show</label>
        <select id="qprocess" value={only} onChange={(e) => setOnly(e.target.value)}>{PROCESSES.map((p) => <option key={p}>{p}</option>)}</select>
        <label><input type="checkbox" checked={grouped} onChange={(e) => setGrouped(e.target.checked)} /> by statement</label>
        <label><input type="checkbox" checked={housekeeping} onChange={(e) => setHousekeeping(e.target.checked)} /> housekeeping polls</label></p>
      <div className="two">
        {grouped ? (
          <table className="small" data-testid="statements"><thead><tr><th>statement</th><th>runs</th><th>errors</th><th>p50 ms</th><th>p95 ms</th><th>max ms</th><th><span className="sr-only">plans</span></th></tr></thead>
            <tbody>{statements.map((s) => (
              <tr key={s.query} data-testid="statement" data-query={s.query} data-housekeeping={s.housekeeping ? "yes" : "no"} className={s.errors ? "bad" : ""}>
                <td><code>{s.query}</code> <span className="muted">{s.processes.join(", ")}</span></td><td className="num">{s.count}</td>
                <td className="num">{s.errors}</td><td className="num">{s.p50_ms.toFixed(1)}</td><td className="num">{s.p95_ms.toFixed(1)}</td>
                <td className="num">{s.max_ms.toFixed(1)}</td>
                <td><button onClick={() => show(s.slowest.profilable ? "PROFILE" : "EXPLAIN", s.slowest)} aria-label={`slowest run of ${s.query}`}>
                  slowest: {s.slowest.profilable ? "PROFILE" : "EXPLAIN"}</button></td></tr>))}</tbody></table>
        ) : (
          <table className="small"><thead><tr><th>at</th><th>process</th><th>query</th><th>ms</th><th>rows</th><th><span className="sr-only">plans</span></th></tr></thead>
            <tbody>{shown.slice(0, 80).map((q) => (
              <tr key={q.id} data-testid="query" data-id={q.id} data-process={q.process} className={q.ok ? "" : "bad"}>
                <td>{new Date(q.at_ms).toLocaleTimeString()}</td><td>{q.process}</td><td><code>{q.query}</code></td>
                <td className="num">{q.ms.toFixed(1)}</td><td className="num">{q.rows}</td>
                <td><button onClick={() => show("EXPLAIN", q)} aria-label={`EXPLAIN ${q.query}`}>EXPLAIN</button>{" "}
                  {q.profilable && <button onClick={() => show("PROFILE", q)} aria-label={`PROFILE ${q.query}`}>PROFILE</button>}</td></tr>))}</tbody></table>
        )}
        <div>
          {problem && <p className="problem">{problem}</p>}
          {plan ? (
            <div data-testid="plan" data-how={plan.how}><h4>{plan.how} {plan.query}{plan.process ? <span className="muted small"> · as {plan.process} ran it</span> : null}</h4>
              <pre className="plan">{plan.plan.join("\n")}</pre>
              {plan.parameters && <details><summary>Parameters</summary><pre>{JSON.stringify(plan.parameters, null, 2)}</pre></details>}
              <details><summary>Cypher</summary><pre>{plan.cypher}</pre></details></div>
          ) : <p className="muted">Each statement's slowest run opens with its plan: PROFILE for a read the log kept the values of (run again, each operation's records and time), else EXPLAIN.</p>}
        </div>
      </div>
    </section>
  );
}
