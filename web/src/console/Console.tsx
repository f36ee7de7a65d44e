import { useState } from "react";
import { ApiError, call, signIn, signOut, useTenant, type Whoami } from "./api";
import { Bench } from "./Bench";
import { Benchmarks } from "./Benchmarks";
import { Database } from "./Database";
import { Memory } from "./Memory";
import { Network } from "./Network";
import { Simulator } from "./Simulator";
import { Team } from "./Team";
import { Tenants } from "./Tenants";
import { Tickets } from "./Tickets";

const PAGES = ["Memory", "Database", "Tickets", "Agent team", "Network", "Tenants", "Simulator", "Benchmarks"] as const;
type Page = (typeof PAGES)[number];

export function Console() {
  const bench = new URLSearchParams(location.search).get("bench");
  const [who, setWho] = useState<Whoami | null>(null);
  const [tenant, setTenant] = useState<string | null>(null);
  const [page, setPage] = useState<Page>("Memory");
  if (bench) return <Bench nodes={bench === "empty" ? 0 : Number(bench)} folded={new URLSearchParams(location.search).get("folded") === "1"} />;
  if (!who || !tenant) return <SignIn who={who} onWho={setWho} onTenant={(t) => { useTenant(t); setTenant(t); }} />;
  return (
    <div className="console">
      <header className="top">
        <div className="brand"><span className="logo">◆</span> Relay console <span className="muted small">· {tenant}{who.admin ? " (admin)" : ""}</span></div>
        <nav className="tabs" aria-label="Console pages">
          {PAGES.map((p) => (
            <button key={p} className={`tab${p === page ? " on" : ""}`} onClick={() => setPage(p)}>{p}</button>
          ))}
        </nav>
        <button className="quiet" onClick={() => { signOut(); setWho(null); setTenant(null); }}>Sign out</button>
      </header>
      <main>
        {page === "Memory" && <Memory admin={who.admin} />}
        {page === "Database" && <Database />}
        {page === "Tickets" && <Tickets admin={who.admin} />}
        {page === "Agent team" && <Team admin={who.admin} />}
        {page === "Network" && <Network admin={who.admin} />}
        {page === "Tenants" && <Tenants admin={who.admin} />}
        {page === "Simulator" && <Simulator />}
        {page === "Benchmarks" && <Benchmarks />}
      </main>
    </div>
  );
}

function SignIn({ who, onWho, onTenant }: { who: Whoami | null; onWho: (w: Whoami) => void; onTenant: (t: string) => void }) {
  const [key, setKey] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const [pick, setPick] = useState("");
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    setProblem(null);
    signIn(key.trim());
    try {
      const w = await call<Whoami>("/v1/console/whoami");
      onWho(w);
      if (!w.admin && w.tenant) onTenant(w.tenant);
      else setPick(w.tenants[0] ?? "");
    } catch (err) {
      signOut();
      setProblem(err instanceof ApiError ? err.message : String(err));
    }
    setKey("");  // the key is kept by the api module only, not in the form
  };
  return (
    <div className="signin">
      <h1><span className="logo">◆</span> Relay staff console</h1>
      {!who?.admin ? (
        <form onSubmit={submit}>
          <label htmlFor="key">A tenant's key, or the admin key</label>
          <input id="key" type="password" autoComplete="off" value={key} onChange={(e) => setKey(e.target.value)} />
          <button type="submit" disabled={!key.trim()}>Sign in</button>
          <p className="muted small">The key stays in this tab's memory: closing or reloading the tab signs you out.</p>
        </form>
      ) : (
        <form onSubmit={(e) => { e.preventDefault(); if (pick) onTenant(pick); }}>
          <label htmlFor="tenant">Tenant</label>
          <select id="tenant" value={pick} onChange={(e) => setPick(e.target.value)}>
            {who.tenants.map((t) => <option key={t} value={t}>{t}</option>)}
          </select>
          <button type="submit" disabled={!pick}>Open</button>
          <p className="muted small">With the admin key the graph, its conflicts and the database are open; asking, explaining and settling need the tenant's own key.</p>
        </form>
      )}
      {problem && <p className="problem" role="alert">{problem}</p>}
    </div>
  );
}
