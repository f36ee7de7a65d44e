import { useCallback, useEffect, useState } from "react";
import { ApiError, api, live, post, setShownZone, tenant, type LiveEvent, type Me } from "./api";
import { Chat } from "./Chat";
import { Judge, JudgeTenantNote, judgeReturn, pendingJudge, startJudge } from "./Judge";
import { Line, Memory, Plans, Tickets } from "./screens";

const SCREENS = [
  ["chat", "Chat"],
  ["tickets", "Your tickets"],
  ["memory", "What we remember"],
  ["line", "Your line"],
  ["plans", "Plans and coverage"],
] as const;
export type Screen = (typeof SCREENS)[number][0];

export function App() {
  const [back] = useState(judgeReturn);
  useEffect(() => {
    // A reload after Judge mode (its story cannot pick up half-way) returns to the demo it came from.
    if (back) { sessionStorage.removeItem("relay-judge"); window.location.replace(back); }
  }, [back]);
  if (back) return <p className="muted">Judge mode is over: back to the demo…</p>;
  return <Site />;
}

function Site() {
  const [customer, setCustomer] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [screen, setScreen] = useState<Screen>(() => {
    const h = window.location.hash.slice(1);
    return (SCREENS.find(([k]) => k === h)?.[0] ?? "chat") as Screen;
  });
  const [connected, setConnected] = useState(false);
  const [lastEvent, setLastEvent] = useState<LiveEvent | null>(null);
  // Moves on every live event: each screen re-reads what it shows.
  const [tick, setTick] = useState(0);
  const [session, setSessionState] = useState<string | null>(() => sessionStorage.getItem(`relay-session:${tenant}`));
  const setSession = useCallback((s: string | null) => {
    if (s) sessionStorage.setItem(`relay-session:${tenant}`, s);
    else sessionStorage.removeItem(`relay-session:${tenant}`);
    setSessionState(s);
  }, []);
  const [nonce, setNonce] = useState(0);
  const [judge] = useState(pendingJudge);
  // the zone every time on the site is shown in (it changes when the desk learns your city)
  // (kept as state too, so a change re-renders every screen)
  const [, setZone] = useState<string | null>(null);
  const know = useCallback((me: Me) => {
    setShownZone(me.time_zone);
    setZone(me.time_zone);
  }, []);

  useEffect(() => {
    // the time zone lets the desk quote your country's prices before you give an address
    post<Me>("/me/session", { time_zone: Intl.DateTimeFormat().resolvedOptions().timeZone })
      .then((me) => {
        know(me);
        setCustomer(me.customer);
      })
      .catch((e: ApiError) => setProblem(e.message));
  }, [know]);

  useEffect(() => {
    if (customer && tick > 0) api<Me>("/me").then(know).catch(() => {});
  }, [customer, tick, know]);

  const onEvent = useCallback((e: LiveEvent) => {
    setLastEvent(e);
    setTick((t) => t + 1);
  }, []);
  useEffect(() => (customer ? live(onEvent, setConnected) : undefined), [customer, onEvent]);

  const go = useCallback((s: Screen) => {
    setScreen(s);
    window.history.replaceState(null, "", `#${s}`);
  }, []);

  return (
    <div className="app">
      <header className="top">
        <div className="brand">
          <span className="logo" aria-hidden="true">●</span> Relay Fibre <span className="muted">support</span>
        </div>
        <div className="status" aria-live="polite">
          {customer ? (
            <span className={connected ? "dot up" : "dot"}>{connected ? "live" : "connecting…"}</span>
          ) : null}
          {tenant !== "demo" ? <span className="muted"> · {tenant}</span> : null}
        </div>
        {!judge ? (
          <button className="judge-start" onClick={() => startJudge().catch((e: Error) => setProblem(e.message))}>
            ▶ Judge mode
          </button>
        ) : null}
      </header>
      {!judge ? <JudgeTenantNote /> : null}
      <nav className="tabs" aria-label="Screens">
        {SCREENS.map(([key, label]) => (
          <button key={key} className={screen === key ? "tab on" : "tab"} aria-current={screen === key ? "page" : undefined}
            onClick={() => go(key)}>
            {label}
          </button>
        ))}
      </nav>
      <main className="screen">
        {problem ? (
          <p role="alert" className="problem">This site is not available: {problem}</p>
        ) : !customer ? (
          <p className="muted">Opening your session…</p>
        ) : screen === "tickets" ? (
          <Tickets tick={tick} />
        ) : screen === "memory" ? (
          <Memory tick={tick} />
        ) : screen === "line" ? (
          <Line tick={tick} />
        ) : screen === "plans" ? (
          <Plans />
        ) : null}
        {/* The chat stays mounted on other screens: its conversation and what you were typing stay too. */}
        {customer ? (
          <div hidden={screen !== "chat"}>
            <Chat tick={tick} lastEvent={lastEvent} session={session} setSession={setSession} nonce={nonce} />
          </div>
        ) : null}
      </main>
      {customer && judge ? (
        <Judge story={judge} go={go} setSession={setSession} said={() => setNonce((n) => n + 1)} />
      ) : null}
    </div>
  );
}
