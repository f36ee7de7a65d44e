import { useEffect, useState } from "react";
import { c, call } from "./api";

type Flow = { writer: string; reader: string; facts: number; reads: number; last_ms: number | null };

/** Knowledge flowing between agents, measured from CONSULTED edges: whose facts which agent read. */
export function Team() {
  const [flows, setFlows] = useState<Flow[] | null>(null);
  useEffect(() => {
    const load = () => call<{ flows: Flow[] }>(c("/knowledge")).then((r) => setFlows(r.flows));
    load();
    const i = window.setInterval(load, 5000);
    return () => clearInterval(i);
  }, []);
  const most = Math.max(1, ...(flows ?? []).map((f) => f.reads));
  return (
    <section className="card" data-testid="team">
      <h3>Knowledge flows <span className="muted small">an agent that consulted facts another agent wrote (CONSULTED edges)</span></h3>
      {flows === null ? <p className="muted">Loading…</p> : flows.length === 0 ? <p className="muted">No agent has read another's facts yet.</p> : (
        <table><thead><tr><th>wrote</th><th /><th>read by</th><th>facts</th><th>reads</th><th /><th>last</th></tr></thead>
          <tbody>{flows.map((f) => (
            <tr key={f.writer + f.reader} data-testid="flow" data-writer={f.writer} data-reader={f.reader}>
              <td><b>{f.writer}</b></td><td>→</td><td><b>{f.reader}</b></td><td className="num">{f.facts}</td>
              <td className="num">{f.reads}</td>
              <td style={{ width: "40%" }}><div className="bar" style={{ width: `${(100 * f.reads) / most}%` }} /></td>
              <td className="small">{f.last_ms ? new Date(f.last_ms).toLocaleString() : ""}</td></tr>))}</tbody></table>
      )}
    </section>
  );
}
