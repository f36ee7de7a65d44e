import { useEffect, useRef, useState } from "react";
import { call, t } from "./api";

type Item = { id: string; stage: string; owner: string | null; customer: string; opened_at: string; issue: string; updated_at: string };
type Step = { at: string; agent: string; event: string; detail: string | null };
type Ticket = Item & { summary: string; timeline: Step[]; handoffs: { from: string; to: string; at: string }[] };

export function Tickets({ admin }: { admin: boolean }) {
  const [list, setList] = useState<Item[] | null>(null);
  const [open, setOpen] = useState<Ticket | null>(null);
  useEffect(() => { if (!admin) call<{ tickets: Item[] }>(t("/tickets")).then((r) => setList(r.tickets)); }, [admin]);
  if (admin) return <p className="muted">Tickets need the tenant's key.</p>;
  return (
    <div className="tickets">
      <section className="card">
        <h3>Tickets</h3>
        {list === null ? <p className="muted">Loading…</p> : list.length === 0 ? <p className="muted">No tickets.</p> : (
          <table><thead><tr><th>ticket</th><th>stage</th><th>owner</th><th>issue</th><th>opened</th></tr></thead>
            <tbody>{list.map((i) => (
              <tr key={i.id} data-testid="ticket-row" data-stage={i.stage} onClick={() => call<Ticket>(t(`/tickets/${i.id}`)).then(setOpen)} className="click">
                <td><button className="link">{i.id}</button></td><td><span className={`stage ${i.stage}`}>{i.stage}</span></td>
                <td>{i.owner ?? "—"}</td><td>{i.issue}</td><td>{new Date(i.opened_at).toLocaleString()}</td></tr>))}</tbody></table>
        )}
      </section>
      {open && <Lanes ticket={open} />}
    </div>
  );
}

/** One lane per agent, each step at its real time; Replay plays them back with their real gaps (capped). */
function Lanes({ ticket }: { ticket: Ticket }) {
  const steps = [...ticket.timeline].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  const agents = [...new Set(steps.map((s) => s.agent))];
  const t0 = steps.length ? Date.parse(steps[0].at) : 0;
  const span = Math.max(1, (steps.length ? Date.parse(steps[steps.length - 1].at) : 0) - t0);
  const [shown, setShown] = useState(steps.length);
  const timer = useRef<number | null>(null);
  useEffect(() => () => { if (timer.current) clearTimeout(timer.current); }, []);
  const replay = () => {
    setShown(0);
    const next = (i: number) => {
      setShown(i + 1);
      if (i + 1 < steps.length) {
        const gap = Date.parse(steps[i + 1].at) - Date.parse(steps[i].at);
        timer.current = window.setTimeout(() => next(i + 1), Math.min(1500, Math.max(80, gap)));
      }
    };
    if (steps.length) next(0);
  };
  return (
    <section className="card" data-testid="lanes" data-shown={shown} data-steps={steps.length}>
      <h3>{ticket.id} <span className={`stage ${ticket.stage}`}>{ticket.stage}</span> <button onClick={replay}>▶ Replay the handoff</button></h3>
      <p className="muted small">{ticket.summary}</p>
      <div className="lanes">
        {agents.map((a) => (
          <div key={a} className="lane" data-testid="lane" data-agent={a}>
            <div className="lane-name">{a}</div>
            <div className="lane-track">
              {steps.map((s, i) => s.agent === a && i < shown && (
                // Steps close in time alternate between two rows, so neither hides the other.
                <div key={i} className="step" style={{ left: `${((Date.parse(s.at) - t0) / span) * 88}%`, top: i % 2 ? 24 : 3 }} title={`${s.at} ${s.detail ?? ""}`} data-testid="step">
                  {s.event}
                </div>))}
            </div>
          </div>))}
      </div>
      <ol className="small">{steps.slice(0, shown).map((s, i) => <li key={i}>{new Date(s.at).toLocaleTimeString()} · <b>{s.agent}</b> {s.event} {s.detail && <span className="muted">{s.detail}</span>}</li>)}</ol>
    </section>
  );
}
