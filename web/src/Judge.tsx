import { useCallback, useEffect, useRef, useState } from "react";
import { api, post, tenant, type Fact, type TicketItem } from "./api";
import type { Screen } from "./App";

// Judge mode: the demo story (services/simulator/demo.py) played in this page through the real
// agents, on a throwaway tenant the gateway makes for it; the page says the customer's words
// through her own session. Each step is a row of STEPS: its act (what she does), the event it
// waits for (the ticket closed, the move on file), then its screen, then its caption, held at least
// `hold_s` of unpaused time (RELAY_JUDGE_HOLD_S). A caption never shows before its event.

type Story = { tenant: string; customer: string; says: Record<string, string>; hold_s: number; from: string; started?: boolean };
const KEY = "relay-judge";
const GUARD_MS = 180_000; // a step the agents have not finished by then stops the story
const TICK_MS = 100;

export async function startJudge(): Promise<void> {
  const r = await fetch("/v1/site/judge", { method: "POST", credentials: "same-origin" });
  const body = await r.json();
  if (!r.ok) throw new Error(body?.error?.message ?? `HTTP ${r.status}`);
  const story: Story = { ...body, from: window.location.pathname };
  sessionStorage.setItem(KEY, JSON.stringify(story));
  window.location.assign(`/t/${encodeURIComponent(body.tenant)}/#chat`);
}

function stored(): Story | null {
  const raw = sessionStorage.getItem(KEY);
  return raw ? (JSON.parse(raw) as Story) : null;
}

/** The story this page was opened for, if it is the Judge tenant's page and it has not started yet. */
export function pendingJudge(): Story | null {
  const story = stored();
  return story && story.tenant === tenant && !story.started ? story : null;
}

/** Where a reload of a Judge tenant's page goes once its story started (or ended): back to the
 * demo the visitor came from. Null when this page is not such a page. */
export function judgeReturn(): string | null {
  const story = stored();
  if (story && story.tenant === tenant && story.started) return story.from || "/";
  return null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(read: () => Promise<T | undefined | null | false>, what: string, stopped: () => boolean): Promise<T> {
  const deadline = Date.now() + GUARD_MS;
  for (;;) {
    if (stopped()) throw new Exited();
    const got = await read().catch(() => undefined);
    if (got) return got;
    if (Date.now() > deadline) throw new Error(`waited too long for ${what}`);
    await sleep(500);
  }
}

class Exited extends Error {}

const tickets = () => api<{ tickets: TicketItem[] }>("/me/tickets").then((r) => r.tickets);
const current = (predicate: string) =>
  api<{ facts: Fact[] }>("/me/facts").then((r) => r.facts.filter((f) => f.predicate === predicate && f.state === "current"));

type Ctx = {
  say: (what: string, fresh: boolean) => Promise<void>;
  wait: <T>(read: () => Promise<T | undefined | null | false>, what: string) => Promise<T>;
  stage: (id: string, stages: string[]) => Promise<TicketItem>;
  ids: { first?: string; second?: string };
};

/** One step: what she does, the event it waits for (its result is the step's evidence), the screen
 * that shows it, and the caption that says it. */
type Step = { screen: Screen; caption: string; shown: string; act?: (c: Ctx) => Promise<void>; until: (c: Ctx) => Promise<string> };

const STEPS: Step[] = [
  {
    screen: "chat", shown: "her report of a red LOS light, and the ticket intake opened",
    caption: "1/8 A new customer reports a fault: a red LOS light. Intake files what she says, opens a ticket and hands it to the resolver. Open the reply's How I know.",
    act: (c) => c.say("fault", true),
    until: async (c) => { const t = await c.wait(() => tickets().then((ts) => ts[0]), "her first ticket"); c.ids.first = t.id; return `ticket ${t.id} opened`; },
  },
  {
    screen: "memory", shown: "her phone number and router on file",
    caption: "2/8 She answers the desk's question in the same conversation: her phone number and router go on file.",
    act: (c) => c.say("details", false),
    until: async (c) => { await c.wait(() => current("has_router").then((f) => f.length > 0), "her router to be on file"); return "router on file"; },
  },
  {
    screen: "tickets", shown: "the resolver measuring no light at her box and booking a technician",
    caption: "3/8 The resolver picks the ticket up and measures her line: no light reaches her box (the red LOS light), so it books a technician.",
    until: async (c) => {
      // the visit may follow at once (lab time runs ahead): the booking in the timeline is the event
      await c.wait(() => api<{ timeline: { event: string }[] }>(`/me/tickets/${encodeURIComponent(c.ids.first!)}`)
        .then((t) => t.timeline.some((e) => e.event === "technician_dispatched")), "a technician to be booked");
      return "technician booked";
    },
  },
  {
    screen: "tickets", shown: "the technician's fix, confirmed by her, and the ticket closed",
    caption: "4/8 The technician re-splices the fibre at her box and the resolver measures the line again; she confirms the fix and the ticket closes.",
    act: async (c) => {
      await c.stage(c.ids.first!, ["fixed"]); // visited and measured again: only then does she confirm
      await post(`/me/tickets/${encodeURIComponent(c.ids.first!)}/confirm`, { fixed: true });
    },
    until: async (c) => (await c.stage(c.ids.first!, ["closed"])).stage,
  },
  {
    screen: "memory", shown: "her move: Mumbai current, Pune kept and ended",
    caption: "5/8 She moves to Mumbai and says so in a new conversation. What we remember keeps Pune, ended, and makes Mumbai current.",
    act: (c) => c.say("move", true),
    until: async (c) => { await c.wait(() => current("lives_in").then((f) => f.some((x) => /mumbai/i.test(x.object))), "Mumbai to be current"); return "Mumbai current"; },
  },
  {
    screen: "chat", shown: "her Wi-Fi complaint, with nothing asked again",
    caption: "6/8 A week on, her Wi-Fi keeps dropping. The desk remembers her name, number, router and city, and asks for none of them.",
    act: (c) => c.say("wifi", true),
    until: async (c) => {
      const t = await c.wait(() => tickets().then((ts) => ts.find((x) => x.id !== c.ids.first)), "her second ticket");
      c.ids.second = t.id;
      return `ticket ${t.id} opened`;
    },
  },
  {
    screen: "tickets", shown: "the remote fix, measured again before it was called fixed",
    caption: "7/8 The resolver fixes it remotely and measures the line again before calling it fixed.",
    until: async (c) => (await c.stage(c.ids.second!, ["fixed"])).stage,
  },
  {
    screen: "chat", shown: "the ticket closed on her word in the chat",
    caption: "8/8 She says it works, in the chat: the ticket closes on her word.",
    act: (c) => c.say("works", false),
    until: async (c) => (await c.stage(c.ids.second!, ["closed"])).stage,
  },
];

type Phase = "starting" | "acting" | "holding" | "done" | "failed" | "exited";
type Props = { story: Story; go: (s: Screen) => void; setSession: (s: string | null) => void; said: () => void };

export function Judge({ story, go, setSession, said }: Props) {
  const [shown, setShown] = useState<{ caption: string; evidence: string }[]>([]);
  const [phase, setPhase] = useState<Phase>("starting");
  const [paused, setPaused] = useState(false);
  const [failed, setFailed] = useState<string | null>(null);
  const started = useRef(false);
  const pause = useRef(false);
  const skip = useRef(false);
  const stop = useRef(false);
  pause.current = paused;

  const exit = useCallback(() => {
    stop.current = true;
    setPhase("exited");
  }, []);
  const next = useCallback(() => { skip.current = true; }, []);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.target as HTMLElement | null)?.closest?.("input, textarea, select")) return; // typing is typing
      if (e.key === " ") { e.preventDefault(); setPaused((p) => !p); }
      else if (e.key === "ArrowRight" || e.key === "n" || e.key === "N") next();
      else if (e.key === "Escape") exit();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [next, exit]);

  useEffect(() => {
    if (started.current) return; // once, even under StrictMode's double effects
    started.current = true;
    // From here a reload goes back to the demo: the story cannot pick up half-way.
    sessionStorage.setItem(KEY, JSON.stringify({ ...story, started: true }));
    let session: string | null = null;
    const stopped = () => stop.current;
    const ctx: Ctx = {
      say: async (what, fresh) => {
        if (stopped()) throw new Exited();
        const r = await post<{ session: string }>("/me/chat", fresh || !session ? { text: story.says[what] } : { text: story.says[what], session });
        session = r.session;
        setSession(r.session);
        said();
      },
      wait: (read, what) => until(read, what, stopped),
      stage: (id, stages) => until(() => tickets().then((ts) => ts.find((t) => t.id === id && stages.includes(t.stage))),
        `ticket ${id} to be ${stages.join(" or ")}`, stopped),
      ids: {},
    };
    /** Holds the caption `ms` of unpaused time; Next ends it early (the event has happened already). */
    const hold = async (ms: number) => {
      let left = ms;
      skip.current = false;
      while (left > 0 && !skip.current && !stopped()) {
        await sleep(TICK_MS);
        if (!pause.current) left -= TICK_MS;
      }
      skip.current = false;
      while (pause.current && !stopped()) await sleep(TICK_MS); // paused: the next step waits too
    };
    (async () => {
      setSession(null);
      go("chat");
      for (const step of STEPS) {
        if (stopped()) return;
        setPhase("acting");
        if (step.act) await step.act(ctx);
        const evidence = await step.until(ctx);
        if (stopped()) return;
        go(step.screen);
        setShown((s) => [...s, { caption: step.caption, evidence }]);
        setPhase("holding");
        await hold(story.hold_s * 1000);
      }
      setPhase("done");
    })().catch((e: Error) => {
      if (e instanceof Exited || stop.current) return;
      setFailed(e.message);
      setPhase("failed");
    });
  }, [story, go, setSession, said]);

  const back = story.from || "/";
  if (phase === "exited") {
    return (
      <aside className="judge judge-min" aria-label="Judge mode" data-testid="judge" data-done="exited">
        <p className="caption">Judge mode stopped. You are on the story's own tenant <b>{story.tenant}</b>. <a href={back}>Back to the demo</a></p>
      </aside>
    );
  }
  const last = shown[shown.length - 1];
  const done = phase === "done";
  return (
    <aside className="judge" aria-label="Judge mode" data-testid="judge" data-phase={phase} data-paused={paused ? "yes" : "no"}
      data-step={shown.length} data-done={done ? "yes" : failed ? "failed" : "no"}>
      {done ? (
        <div className="caption" role="status" aria-live="polite" data-testid="caption">
          <b>The story is complete</b>: every step ran through the real agents, on this page's own tenant ({story.tenant}). You saw
          <ol data-testid="summary">{STEPS.map((s, i) => <li key={i}>{s.shown}</li>)}</ol>
          <a href={back} data-testid="back-to-demo">Back to the demo</a> · or look around any screen.
        </div>
      ) : (
        <p role="status" aria-live="polite" className="caption" data-testid="caption">
          {failed ? `The story stopped: ${failed}` : last ? last.caption : "Judge mode is starting: the first step is under way…"}
          {phase === "acting" && last ? <span className="muted"> · next step under way…</span> : null}
        </p>
      )}
      <div className="judge-controls">
        {!done && !failed && (
          <>
            <button onClick={() => setPaused((p) => !p)} aria-keyshortcuts="Space">{paused ? "Resume" : "Pause"}</button>
            <button onClick={next} disabled={phase !== "holding"} aria-keyshortcuts="ArrowRight N">Next</button>
          </>
        )}
        <button onClick={exit} aria-keyshortcuts="Escape">Exit</button>
      </div>
      <ol hidden data-testid="captions">{shown.map((c, i) => <li key={i} data-evidence={c.evidence}>{c.caption}</li>)}</ol>
    </aside>
  );
}

/** A Judge tenant's page opened again after its story: say where the visitor is, and the way back. */
export function JudgeTenantNote() {
  if (!tenant.startsWith("judge-")) return null;
  return (
    <p className="judge-note" data-testid="judge-note">You are on a Judge mode tenant (<b>{tenant}</b>), made for one run of the story. <a href="/">Back to the demo</a></p>
  );
}
