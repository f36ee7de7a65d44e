import { useEffect, useState } from "react";
import { ApiError, c, call, post } from "./api";

type B = {
  suite: { started_at: string; rows: { part: string; figure: string; value: string; target: string; passed: boolean | null }[] } | null;
  memory: { started_at: string; reader: string | null; by_type: { type: string; n: number; relay: number; vector: number }[] } | null;
  render: { nodes: number; edges: number; first_paint_ms: number; fps: number }[] | null;
};

type Evidence = { kind: "fact" | "episode"; text: string; at: string | null; score: number | null; state: string | null };
type Side = { system: string; answer: string | null; evidence: Evidence[]; ms: number };
type Comparison = { question: string; customer: string; relay: Side; vector: Side };

/** The same question asked of Relay and of the vector store, live, on this tenant. */
function Live() {
  const [question, setQuestion] = useState("");
  const [customer, setCustomer] = useState("");
  const [got, setGot] = useState<Comparison | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const ask = async (e: React.FormEvent) => {
    e.preventDefault();
    setProblem(null); setBusy(true);
    try { setGot(await post<Comparison>(c("/compare"), { question, customer })); }
    catch (err) { setProblem(err instanceof ApiError ? err.message : String(err)); }
    setBusy(false);
  };
  const side = (s: Side, id: string) => (
    <section className="card" data-testid={id}>
      <h3>{s.system === "relay" ? "Relay" : "The vector store"} <span className="muted small">{s.ms} ms · {s.system === "relay" ? "recall: facts, current first, and the episodes on its path" : "the customer's turns, 10 nearest by cosine, newest first"}</span></h3>
      <p data-testid="side-answer"><b>Answer:</b> {s.answer ?? <span className="muted">nothing</span>}</p>
      <ol className="small">{s.evidence.map((x, i) => (
        <li key={i} data-testid="side-evidence" data-kind={x.kind} data-state={x.state ?? ""}>
          {x.text} <span className="muted">{x.at ? new Date(x.at).toLocaleDateString() : ""}{x.state ? ` · ${x.state}` : ""}{x.score !== null ? ` · ${x.score.toFixed(2)}` : ""}</span></li>))}</ol>
    </section>);
  return (
    <section className="card" data-testid="compare">
      <h3>Ask both, live <span className="muted small">the same question of Relay and of the plain vector store the memory benchmark measures it against, on this tenant's own conversations</span></h3>
      <form className="row" onSubmit={ask}>
        <label htmlFor="cmp-question">Question</label>
        <input id="cmp-question" value={question} onChange={(e) => setQuestion(e.target.value)} placeholder="Where does Asha Verma live?" />
        <label htmlFor="cmp-customer">About</label>
        <input id="cmp-customer" value={customer} onChange={(e) => setCustomer(e.target.value)} placeholder="a customer's name or id" />
        <button type="submit" disabled={busy || !question.trim() || !customer.trim()}>Ask both</button>
      </form>
      {problem && <p className="problem" role="alert">{problem}</p>}
      {got && <div className="two">{side(got.relay, "relay-side")}{side(got.vector, "vector-side")}</div>}
    </section>
  );
}

/** The latest benchmark results, as the benchmarks last wrote them (bench/results/), and the same
 * question asked of both systems live. */
export function Benchmarks() {
  const [b, setB] = useState<B | null>(null);
  useEffect(() => { call<B>("/v1/console/benchmarks").then(setB); }, []);
  if (!b) return <p className="muted">Loading…</p>;
  return (
    <div className="benchmarks">
      <Live />
      <section className="card" data-testid="accuracy">
        <h3>Accuracy by question type <span className="muted small">{b.memory ? `Relay against the vector store · ${new Date(b.memory.started_at).toLocaleString()} · reader: ${b.memory.reader ?? ""}` : "not run yet"}</span></h3>
        {b.memory && (
          <div className="bars">{b.memory.by_type.map((a) => (
            <div key={a.type} className="barrow" data-testid="accuracy-type" data-type={a.type}>
              <span className="bartype">{a.type.replace(/_/g, " ")} <span className="muted small">n={a.n}</span></span>
              <span className="pair">
                <span className="bar relay" style={{ width: `${a.relay * 100}%` }} title={`Relay ${(a.relay * 100).toFixed(0)}%`}>Relay {(a.relay * 100).toFixed(0)}%</span>
                <span className="bar vector" style={{ width: `${a.vector * 100}%` }} title={`vector ${(a.vector * 100).toFixed(0)}%`}>vector {(a.vector * 100).toFixed(0)}%</span>
              </span>
            </div>))}</div>
        )}
      </section>
      <div className="two">
        <section className="card" data-testid="suite">
          <h3>Speed and safety <span className="muted small">{b.suite ? new Date(b.suite.started_at).toLocaleString() : "not run yet"}</span></h3>
          <table className="small"><tbody>{b.suite?.rows.map((r, i) => (
            <tr key={i}><td>{r.figure}</td><td className="num">{r.value}</td><td className="muted">{r.target}</td>
              <td>{r.passed === null ? "" : r.passed ? "pass" : "miss"}</td></tr>))}</tbody></table>
        </section>
        <section className="card" data-testid="render">
          <h3>Memory graph render <span className="muted small">bench.console_render (software WebGL)</span></h3>
          <table className="small"><thead><tr><th>nodes</th><th>edges</th><th>first paint ms</th><th>fps</th></tr></thead>
            <tbody>{b.render?.map((r) => (
              <tr key={r.nodes}><td className="num">{r.nodes || "0 (baseline)"}</td><td className="num">{r.edges}</td>
                <td className="num">{r.first_paint_ms}</td><td className="num">{r.fps}</td></tr>))}</tbody></table>
        </section>
      </div>
    </div>
  );
}
