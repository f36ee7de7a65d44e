import { useState } from "react";
import { ApiError, currentTenant, post } from "./api";

type Finding = { tenant: string; wrote: boolean; recall_hits: number; cypher_hits: number; live_events: number; found: boolean };
type Result = { word: string; tenant: string; fact_id: string; findings: Finding[]; isolated: boolean };

/** The isolation demo: a secret word written into this tenant, looked for in every tenant. */
export function Tenants({ admin }: { admin: boolean }) {
  const [word, setWord] = useState("");
  const [result, setResult] = useState<Result | null>(null);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  if (!admin) return <p className="muted">The isolation demo looks into every tenant: sign in with the admin key.</p>;
  const run = async (e: React.FormEvent) => {
    e.preventDefault();
    setProblem(null); setBusy(true);
    try { setResult(await post<Result>("/v1/console/isolation", { tenant: currentTenant(), word })); }
    catch (err) { setProblem(err instanceof ApiError ? err.message : String(err)); }
    setBusy(false);
  };
  return (
    <div className="tenants">
      <section className="card">
        <form onSubmit={run} className="row">
          <label htmlFor="word">Secret word</label>
          <input id="word" value={word} onChange={(e) => setWord(e.target.value)} placeholder="pomegranate" />
          <button type="submit" disabled={busy || !word.trim()}>Write it into {currentTenant()} and look everywhere</button>
        </form>
        <p className="muted small">Written as a turn and a fact; then looked for in every tenant through recall (the agents' tools),
          a raw read-only Cypher search of every node's text, and the tenant's live feed.</p>
        {problem && <p className="problem">{problem}</p>}
      </section>
      {result && (
        <section className="card" data-testid="isolation" data-isolated={result.isolated ? "yes" : "no"}>
          <h3>{result.isolated ? `Isolated: only ${result.tenant} knows “${result.word}”` : "NOT isolated"}</h3>
          <table><thead><tr><th>tenant</th><th>recall</th><th>read-only Cypher</th><th>live feed</th><th>found</th></tr></thead>
            <tbody>{result.findings.map((f) => (
              <tr key={f.tenant} data-testid="finding" data-tenant={f.tenant} data-found={f.found ? "yes" : "no"} className={f.wrote ? "control" : ""}>
                <td>{f.tenant}{f.wrote ? " (written here)" : ""}</td><td className="num">{f.recall_hits}</td>
                <td className="num">{f.cypher_hits}</td><td className="num">{f.live_events}</td><td>{f.found ? "found" : "nothing"}</td></tr>))}</tbody></table>
        </section>
      )}
    </div>
  );
}
