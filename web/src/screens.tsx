import { useEffect, useState } from "react";
import { api, when, type Coverage, type Fact, type Hop, type Offers, type TicketDetail, type TicketItem } from "./api";

function useRead<T>(path: string | null, tick: number): [T | null, string | null] {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!path) return;
    let gone = false;
    api<T>(path)
      .then((d) => !gone && (setData(d), setError(null)))
      .catch((e: Error) => !gone && setError(e.message));
    return () => {
      gone = true;
    };
  }, [path, tick]);
  return [data, error];
}

const STEPS = ["reported", "checking_line", "fixing", "fixed"] as const;
const STEP_LABEL: Record<string, string> = {
  reported: "Reported",
  checking_line: "Checking your line",
  fixing: "Fixing",
  fixed: "Fixed",
  technician_dispatched: "Technician booked",
  closed: "Closed",
  reopened: "Reopened",
};

function stepOf(stage: string): number {
  if (stage === "closed") return STEPS.length;
  if (stage === "technician_dispatched") return 2;
  if (stage === "reopened") return 0;
  return Math.max(0, STEPS.indexOf(stage as (typeof STEPS)[number]));
}

function Progress({ stage }: { stage: string }) {
  const at = stepOf(stage);
  const steps = stage === "technician_dispatched" ? ["reported", "checking_line", "technician_dispatched", "fixed"] : STEPS;
  return (
    <ol className="progress" aria-label={`Stage: ${STEP_LABEL[stage] ?? stage}`}>
      {steps.map((s, i) => (
        <li key={s} className={i < at || stage === "closed" || (i === at && stage === "fixed") ? "done" : i === at ? "now" : ""}>
          {STEP_LABEL[s]}
        </li>
      ))}
    </ol>
  );
}

const VISIT_WORDS: Record<string, string> = {
  scheduled: "Technician booked for your home",
  done: "Technician visited",
  cancelled: "Technician visit cancelled",
};

function Ticket({ id, tick }: { id: string; tick: number }) {
  const [t] = useRead<TicketDetail>(`/me/tickets/${encodeURIComponent(id)}`, tick);
  if (!t) return <li className="card">Loading your ticket…</li>;
  // the customer's words of each step (the staff's detail carries ids and UTC: not for this page)
  const steps = t.timeline.filter((e) => e.customer);
  return (
    <li className="card ticket" data-testid="ticket" data-stage={t.stage}>
      <h3>
        {t.summary || t.issue.replace(/_/g, " ")} <span className="muted small">{t.id}</span>
      </h3>
      <p className="stage">{STEP_LABEL[t.stage] ?? t.stage}</p>
      <Progress stage={t.stage} />
      {t.visits.map((v) => (
        <p key={v.visit_id} className="visit" data-testid="visit" data-status={v.status}>
          {VISIT_WORDS[v.status] ?? "Technician visit"}: {v.technician}, {when(v.at)}
        </p>
      ))}
      <details className="how" open={t.stage !== "closed"}>
        <summary>What we did ({steps.length} steps)</summary>
        <ol className="timeline" aria-live="polite">
          {steps.map((e, i) => (
            <li key={i}>
              <span className="muted small">{when(e.at)}</span> {e.customer}
            </li>
          ))}
        </ol>
      </details>
    </li>
  );
}

export function Tickets({ tick }: { tick: number }) {
  const [d, error] = useRead<{ tickets: TicketItem[] }>("/me/tickets", tick);
  return (
    <section aria-labelledby="h-tickets">
      <h2 id="h-tickets">Your tickets</h2>
      {error ? <p role="alert" className="problem">{error}</p> : null}
      {d && d.tickets.length === 0 ? <p className="muted">No tickets. Tell us in the chat if something is wrong.</p> : null}
      <ul className="cards">{d?.tickets.map((t) => <Ticket key={t.id} id={t.id} tick={tick} />)}</ul>
    </section>
  );
}

const PRED: Record<string, string> = {
  lives_in: "Lives in", has_router: "Router", phone: "Phone", on_plan: "Plan", name: "Name", has_issue: "Problem on file",
};

export function Memory({ tick }: { tick: number }) {
  const [d, error] = useRead<{ facts: Fact[] }>("/me/facts", tick);
  const facts = [...(d?.facts ?? [])].sort((a, b) => a.predicate.localeCompare(b.predicate) || b.valid_from.localeCompare(a.valid_from));
  // What a version replaced: the version of the same fact that ended when it began.
  const replaced = (f: Fact) =>
    facts.find((o) => o !== f && o.predicate === f.predicate && o.valid_to && o.valid_to <= f.valid_from && o.state !== "current");
  return (
    <section aria-labelledby="h-memory">
      <h2 id="h-memory">What we remember about you</h2>
      {error ? <p role="alert" className="problem">{error}</p> : null}
      {d && facts.length === 0 ? <p className="muted">Nothing yet: we only keep what you tell us.</p> : null}
      {facts.length ? (
        <div className="table-wrap">
          <table className="facts">
            <thead>
              <tr><th scope="col">What</th><th scope="col">Value</th><th scope="col">Written by</th><th scope="col">True since</th>
                <th scope="col">We learnt it</th><th scope="col">Replaced</th><th scope="col">Ended</th></tr>
            </thead>
            <tbody>
              {facts.map((f) => {
                const ended = f.valid_to !== null || f.expired_at !== null || f.state !== "current";
                return (
                  <tr key={f.fact_id} className={ended ? "ended" : ""} data-testid="fact" data-state={f.state}>
                    <th scope="row">{PRED[f.predicate] ?? f.predicate.replace(/_/g, " ")}</th>
                    <td data-label="Value" className="value">{f.object}</td>
                    <td data-label="Written by">{f.asserted_by}</td>
                    <td data-label="True since">{when(f.valid_from)}</td>
                    <td data-label="We learnt it">{when(f.recorded_at)}</td>
                    <td data-label="Replaced">{replaced(f)?.object ?? ""}</td>
                    <td data-label="Ended">{ended ? `${f.state} ${when(f.valid_to ?? f.expired_at)}` : ""}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

const KIND: Record<string, string> = { Backbone: "core", Pop: "city hub", Olt: "exchange", Splitter: "street cabinet", Ont: "home box" };

export function Line({ tick }: { tick: number }) {
  const [d, error] = useRead<{ line: Hop[] }>("/me/line", tick);
  const hops = [...(d?.line ?? [])].reverse(); // core first, your home last
  return (
    <section aria-labelledby="h-line">
      <h2 id="h-line">Your line</h2>
      {error ? <p role="alert" className="problem">{error}</p> : null}
      {d && hops.length === 0 ? <p className="muted">You have no line with us yet: it appears once we know your address.</p> : null}
      <ol className="line" aria-live="polite">
        {hops.map((h, i) => (
          <li key={h.node_id} className={h.status === "up" ? "hop up" : "hop down"} data-testid="hop" data-node={h.node_id}>
            <span className="node">{i === hops.length - 1 ? "Your home box" : h.name}</span>
            <span className="muted small"> {KIND[h.kind] ?? h.kind}</span>
            <span className={h.status === "up" ? "badge up" : "badge down"}>{h.status}</span>
          </li>
        ))}
      </ol>
      {hops.length ? <p className="muted small">Other customers on the same equipment are never shown.</p> : null}
    </section>
  );
}

const COUNTRIES: [string, string][] = [
  ["IN", "India"], ["GB", "United Kingdom"], ["IE", "Ireland"], ["FR", "France"], ["DE", "Germany"], ["ES", "Spain"],
  ["IT", "Italy"], ["NL", "Netherlands"], ["US", "United States"], ["CA", "Canada"], ["AU", "Australia"],
  ["JP", "Japan"], ["SG", "Singapore"], ["AE", "United Arab Emirates"], ["ZA", "South Africa"], ["BR", "Brazil"],
  ["MX", "Mexico"],
];

export function Plans() {
  // null: the country the desk quotes you (your address's, else your time zone's), as it answers
  const [country, setCountry] = useState<string | null>(null);
  const [d, error] = useRead<Offers>(country ? `/me/plans?country=${country}` : "/me/plans", 0);
  const shown = country ?? d?.country ?? "";
  // the network changes under the page: read the cities' state again every half minute
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const every = window.setInterval(() => setTick((t) => t + 1), 30_000);
    return () => window.clearInterval(every);
  }, []);
  const [coverage] = useRead<Coverage>("/me/coverage", tick);
  return (
    <section aria-labelledby="h-plans">
      <h2 id="h-plans">Plans and coverage</h2>
      <label className="switch">
        Country <select value={shown} onChange={(e) => setCountry(e.target.value)}>
          {shown && !COUNTRIES.some(([c]) => c === shown) ? <option value={shown}>{shown}</option> : null}
          {COUNTRIES.map(([c, n]) => <option key={c} value={c}>{n}</option>)}
        </select>
        {country === null ? <span className="muted small"> (the desk's pick for you: your address, else your time zone)</span> : null}
      </label>
      {error ? <p role="alert" className="problem">{error}</p> : null}
      <div className="coverage" data-testid="coverage" aria-live="polite">
        {coverage === null ? null : coverage.cities.length === 0 ? (
          <p className="muted">Every city we serve is running normally right now.</p>
        ) : (
          <>
            <p>Right now:</p>
            <ul>
              {coverage.cities.map((c) => (
                <li key={c.hub} data-testid="city-status" className={c.status}>
                  <b>{c.city}</b>: {c.status === "outage" ? "outage" : "degraded"} <span className="muted small">({c.reason})</span>
                </li>
              ))}
            </ul>
          </>
        )}
      </div>
      <ul className="cards plans">
        {d?.plans.map((p) => (
          <li key={p.offer_id} className="card plan" data-testid="plan">
            <h3>{p.name}</h3>
            <p className="speed">{p.down_mbps} / {p.up_mbps} Mbps</p>
            <p className="price">{p.price.display_incl_tax} <span className="muted small">per {p.price.period}, incl. {Math.round(p.price.tax_rate * 100)}% tax</span></p>
            <p className="muted small">{p.description}</p>
          </li>
        ))}
      </ul>
      {d?.addons.length ? <h3>Add-ons</h3> : null}
      <ul className="addons">
        {d?.addons.map((a) => (
          <li key={a.offer_id}><b>{a.name}</b> {a.price.display_incl_tax} <span className="muted small">/ {a.price.period}: {a.description}</span></li>
        ))}
      </ul>
    </section>
  );
}
