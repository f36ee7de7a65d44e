import { useEffect, useState } from "react";
import { ApiError, c, call, t } from "./api";

type Flow = { writer: string; reader: string; facts: number; reads: number; last_ms: number | null };
type Crossing = { writer: string; reader: string; fact_id: string; predicate: string | null; object: string | null;
  current: boolean; reads: number; first_ms: number | null; last_ms: number | null };
type Expert = { expert: string; tickets: number; fixed: number; issues: string[]; why: string[]; last_ms: number | null; ticket_ids: string[] };

const when = (ms: number | null) => (ms ? new Date(ms).toLocaleString() : "");

/** Knowledge flowing between agents, measured from CONSULTED edges: whose facts which agent read. */
export function Team({ admin }: { admin: boolean }) {
  return (<><Flows /><OneTicket admin={admin} /></>);
}

function Flows() {
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

/** One ticket: whose facts its agents consulted on it (crossings), and who has worked on similar issues. */
function OneTicket({ admin }: { admin: boolean }) {
  const [ids, setIds] = useState<string[]>([]);
  const [ticket, setTicket] = useState("");
  const [crossings, setCrossings] = useState<{ ticket_id: string; crossings: Crossing[] } | null>(null);
  const [experts, setExperts] = useState<{ ticket_id: string; issue: string; experts: Expert[] } | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => { if (!admin) call<{ tickets: { id: string }[] }>(t("/tickets")).then((r) => setIds(r.tickets.map((x) => x.id))).catch(() => undefined); }, [admin]);
  const look = async (e: React.FormEvent) => {
    e.preventDefault();
    setProblem(null);
    const id = encodeURIComponent(ticket.trim());
    try {
      const [x, w] = await Promise.all([call<typeof crossings>(c(`/tickets/${id}/crossings`)), call<typeof experts>(c(`/tickets/${id}/experts`))]);
      setCrossings(x); setExperts(w);
    } catch (err) { setCrossings(null); setExperts(null); setProblem(err instanceof ApiError ? err.message : String(err)); }
  };
  return (
    <div className="two">
      <section className="card" data-testid="crossings">
        <h3>Knowledge crossings on one ticket <span className="muted small">facts about its customer that an agent on the ticket consulted while it was open, written by another agent</span></h3>
        <form className="row" onSubmit={look}>
          <label htmlFor="crossing-ticket">Ticket</label>
          <input id="crossing-ticket" list="crossing-tickets" value={ticket} onChange={(e) => setTicket(e.target.value)} placeholder="T-…" />
          <datalist id="crossing-tickets">{ids.map((i) => <option key={i} value={i} />)}</datalist>
          <button type="submit" disabled={!ticket.trim()}>Show</button>
        </form>
        {problem && <p className="problem" role="alert">{problem}</p>}
        {crossings && (crossings.crossings.length === 0 ? <p className="muted">No agent on {crossings.ticket_id} read another agent's facts about its customer.</p> : (
          <table className="small"><thead><tr><th>wrote</th><th /><th>read by</th><th>fact</th><th>reads</th><th>last read</th></tr></thead>
            <tbody>{crossings.crossings.map((x) => (
              <tr key={x.fact_id + x.reader} data-testid="crossing" data-writer={x.writer} data-reader={x.reader}>
                <td><b>{x.writer}</b></td><td>→</td><td><b>{x.reader}</b></td>
                <td>{x.predicate} = {x.object} <span className="muted">{x.current ? "(current)" : "(not current)"}</span></td>
                <td className="num">{x.reads}</td><td className="small">{when(x.last_ms)}</td></tr>))}</tbody></table>))}
      </section>
      <section className="card" data-testid="experts">
        <h3>Who has worked on this? <span className="muted small">people on tickets of similar issues (the same issue, or a fix step in common), found by graph</span></h3>
        {!experts ? <p className="muted">Pick a ticket.</p> : experts.experts.length === 0 ? <p className="muted">Nobody has worked on a ticket like {experts.ticket_id} ({experts.issue}) yet.</p> : (
          <table className="small"><thead><tr><th>who</th><th>similar tickets</th><th>fixed</th><th>issues</th><th>how similar</th></tr></thead>
            <tbody>{experts.experts.map((x) => (
              <tr key={x.expert} data-testid="expert" data-expert={x.expert}>
                <td><b>{x.expert}</b></td><td className="num">{x.tickets}</td><td className="num">{x.fixed}</td>
                <td>{x.issues.join(", ")}</td><td>{x.why.join(", ")}</td></tr>))}</tbody></table>)}
      </section>
    </div>
  );
}
