import { useCallback, useEffect, useState } from "react";
import { ApiError, call, post, t } from "./api";
import { RegionMap } from "./RegionMap";

type Hop = { node_id: string; kind: string; name: string; status: string; capacity_gbps: number; link_type: string | null; link_up: boolean | null };
type Row = { fault_id: string; kind: string; customer: string | null; target: string | null; started_at: string; tickets: string[];
  diagnoses: (string | null)[]; diagnosed_right: boolean; fixed: boolean; fixed_proven: boolean; minutes_to_fix: number | null };
type Board = { faults: number; diagnosed_right: number; fixed: number; fixed_proven: number; rows: Row[] };

// The lab's eight faults (FaultKind), in the order a line meets them from the home outwards.
const COMPLAINT = "Hi, my internet is not working properly since this morning";
const FAULTS = ["router_frozen", "wifi_interference", "payment_failed", "damaged_fibre", "cut_street_cable",
  "hub_link_backup", "hub_link_down", "evening_congestion"];

export function Network({ admin }: { admin: boolean }) {
  const [customer, setCustomer] = useState("");
  const [line, setLine] = useState<Hop[] | null>(null);
  const [board, setBoard] = useState<Board | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const reload = useCallback(() => { if (!admin) call<Board>(t("/lab/scoreboard")).then(setBoard).catch(() => undefined); }, [admin]);
  useEffect(() => { reload(); const i = window.setInterval(reload, 3000); return () => clearInterval(i); }, [reload]);
  if (admin) return <div className="network"><RegionMap admin /><p className="muted">The lab needs the tenant's key.</p></div>;
  const show = async (e?: React.FormEvent) => {
    e?.preventDefault();
    setProblem(null);
    try { setLine((await call<{ line: Hop[] }>(t(`/customers/${encodeURIComponent(customer)}/line`))).line); }
    catch (err) { setProblem(err instanceof ApiError ? err.message : String(err)); }
  };
  // The customer's side of it: a vague complaint through the chat API, as the simulator's
  // customers word one; intake opens a ticket and hands it to the resolver, who measures.
  const report = async () => {
    setProblem(null);
    try {
      const r = await post<{ session: string }>(t("/chat"), { customer, text: COMPLAINT });
      setNote(`${customer} said “${COMPLAINT}” (session ${r.session}); the desk is on it.`);
    } catch (err) { setProblem(err instanceof ApiError ? err.message : String(err)); }
  };
  const inject = async (kind: string | null) => {
    setProblem(null); setNote(null);
    try {
      const r = await post<{ fault_id: string; customer: string | null; visible: unknown[] }>(t("/lab/faults"),
        kind ? { kind, customer } : { customer });
      setNote(`Injected ${kind ?? "a blind fault"} (${r.fault_id}) on ${r.customer ?? customer}; ${r.visible.length} visible change(s).`);
      reload(); show();
    } catch (err) { setProblem(err instanceof ApiError ? err.message : String(err)); }
  };
  return (
    <div className="network">
      <section className="card">
        <form onSubmit={show} className="row">
          <label htmlFor="customer">Customer</label>
          <input id="customer" value={customer} onChange={(e) => setCustomer(e.target.value)} placeholder="a customer's name or id" />
          <button type="submit" disabled={!customer.trim()}>Show the line</button>
        </form>
        {line && (
          <ol className="line" data-testid="line">{line.map((h) => (
            <li key={h.node_id} data-testid="hop" data-status={h.status} className={h.status === "up" ? "" : "down"}>
              <b>{h.kind}</b> {h.name} <span className="muted small">{h.status} · {h.capacity_gbps} Gbps{h.link_type ? ` · ${h.link_type} ${h.link_up ? "up" : "DOWN"}` : ""}</span>
            </li>))}</ol>
        )}
        <h3>Inject a fault</h3>
        <div className="faults">
          {FAULTS.map((f) => <button key={f} disabled={!customer.trim()} onClick={() => inject(f)}>{f.replace(/_/g, " ")}</button>)}
          <button disabled={!customer.trim()} onClick={() => inject(null)}>a blind one</button>
        </div>
        <p className="row"><button disabled={!customer.trim()} onClick={report}>Have the customer report it</button>
          <span className="muted small">sends “{COMPLAINT}” as the customer, through the chat API</span></p>
        {note && <p data-testid="injected" role="status">{note}</p>}
        {problem && <p className="problem">{problem}</p>}
      </section>
      <section className="card" data-testid="scoreboard">
        <h3>Scoreboard {board && <span className="muted small">{board.faults} faults · {board.diagnosed_right} diagnosed right · {board.fixed} fixed · {board.fixed_proven} proven</span>}</h3>
        <table className="small"><thead><tr><th>fault</th><th>kind</th><th>customer</th><th>tickets</th><th>diagnosed as</th><th>grade</th><th>fixed</th><th>minutes</th></tr></thead>
          <tbody>{board?.rows.map((r) => {
            const grade = !r.diagnoses.length ? "waiting" : r.diagnosed_right ? "right" : "wrong";
            return (
              <tr key={r.fault_id} data-testid="score-row" data-kind={r.kind} data-grade={grade} data-fixed={r.fixed_proven ? "proven" : r.fixed ? "yes" : "no"}>
                <td>{r.fault_id}</td><td>{r.kind}</td><td>{r.customer ?? r.target}</td><td>{r.tickets.join(", ")}</td>
                <td data-testid="diagnoses">{r.diagnoses.map((d) => d ?? "none yet").join(", ")}</td>
                <td className={`grade ${grade}`}>{grade === "waiting" ? "awaiting a diagnosis" : grade === "right" ? "✓ right" : "✗ wrong"}</td>
                <td>{r.fixed ? (r.fixed_proven ? "✓ proven" : "✓") : "—"}</td>
                <td>{r.minutes_to_fix?.toFixed(1) ?? ""}</td></tr>);
          })}</tbody></table>
        {board && !board.rows.length && <p className="muted">No fault injected yet.</p>}
      </section>
      <RegionMap admin={false} />
    </div>
  );
}
