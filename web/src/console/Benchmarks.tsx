import { useEffect, useState } from "react";
import { call } from "./api";

type B = {
  suite: { started_at: string; rows: { part: string; figure: string; value: string; target: string; passed: boolean | null }[] } | null;
  memory: { started_at: string; reader: string | null; by_type: { type: string; n: number; relay: number; vector: number }[] } | null;
  render: { nodes: number; edges: number; first_paint_ms: number; fps: number }[] | null;
};

/** The latest benchmark results, as the benchmarks last wrote them (bench/results/). */
export function Benchmarks() {
  const [b, setB] = useState<B | null>(null);
  useEffect(() => { call<B>("/v1/console/benchmarks").then(setB); }, []);
  if (!b) return <p className="muted">Loading…</p>;
  return (
    <div className="benchmarks">
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
