import { useEffect, useRef, useState } from "react";
import { api, post, tenant, type Fact, type TicketItem } from "./api";
import type { Screen } from "./App";

// Judge mode: the demo story (services/simulator/demo.py) played in this page through the real
// agents, on a throwaway tenant the gateway makes for it; the page says the customer's words
// through her own session and shows each step on the screen that shows it.

type Story = { tenant: string; customer: string; says: Record<string, string> };
const KEY = "relay-judge";
const PAUSE_MS = 3500; // time to read a caption before the step runs
const GUARD_MS = 120_000; // a step the agents have not finished by then stops the story

export async function startJudge(): Promise<void> {
  const r = await fetch("/v1/site/judge", { method: "POST", credentials: "same-origin" });
  const body = await r.json();
  if (!r.ok) throw new Error(body?.error?.message ?? `HTTP ${r.status}`);
  sessionStorage.setItem(KEY, JSON.stringify(body));
  window.location.assign(`/t/${encodeURIComponent(body.tenant)}/#chat`);
}

/** The story this page was opened for, if it is the Judge tenant's page. */
export function pendingJudge(): Story | null {
  const raw = sessionStorage.getItem(KEY);
  const story = raw ? (JSON.parse(raw) as Story) : null;
  return story && story.tenant === tenant ? story : null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(read: () => Promise<T | undefined | null | false>, what: string): Promise<T> {
  const deadline = Date.now() + GUARD_MS;
  for (;;) {
    const got = await read().catch(() => undefined);
    if (got) return got;
    if (Date.now() > deadline) throw new Error(`waited too long for ${what}`);
    await sleep(600);
  }
}

const tickets = () => api<{ tickets: TicketItem[] }>("/me/tickets").then((r) => r.tickets);
const current = (predicate: string) =>
  api<{ facts: Fact[] }>("/me/facts").then((r) => r.facts.filter((f) => f.predicate === predicate && f.state === "current"));

type Props = {
  says: Record<string, string>;
  go: (s: Screen) => void;
  setSession: (s: string | null) => void;
  said: () => void;
};

export function Judge({ says, go, setSession, said }: Props) {
  const [captions, setCaptions] = useState<string[]>([]);
  const [done, setDone] = useState(false);
  const [failed, setFailed] = useState<string | null>(null);
  const started = useRef(false);

  useEffect(() => {
    if (started.current) return; // once, even under StrictMode's double effects
    started.current = true;
    let session: string | null = null;
    const caption = async (text: string) => {
      setCaptions((c) => [...c, text]);
      await sleep(PAUSE_MS);
    };
    const say = async (what: string, fresh: boolean) => {
      const r = await post<{ session: string }>("/me/chat", fresh || !session ? { text: says[what] } : { text: says[what], session });
      session = r.session;
      setSession(r.session);
      said();
    };
    const stage = (id: string, stages: string[]) =>
      until(() => tickets().then((ts) => ts.find((t) => t.id === id && stages.includes(t.stage))), `ticket ${id} to be ${stages.join(" or ")}`);

    (async () => {
      setSession(null);
      go("chat");
      await caption("1/8 A new customer reports a fault: a red LOS light. Intake files what she says, opens a ticket and hands it to the resolver. Watch the reply arrive, then open its How I know.");
      await say("fault", true);
      const first = await until(() => tickets().then((ts) => ts[0]), "her first ticket");
      await caption("2/8 She answers the desk's question in the same conversation: her phone number and router go on file.");
      await say("details", false);
      await until(() => current("has_router").then((f) => f.length > 0), "her router to be on file");
      go("tickets");
      await caption("3/8 The resolver picks the ticket up, measures her line and, for a red light, books a technician. Watch its steps appear.");
      await stage(first.id, ["technician_dispatched"]);
      await caption("4/8 The technician re-splices the fibre at her box; she confirms the fix and the ticket closes.");
      await post(`/me/tickets/${encodeURIComponent(first.id)}/confirm`, { fixed: true });
      await stage(first.id, ["closed"]);
      go("chat");
      await caption("5/8 She moves to Mumbai and says so in a new conversation. What we remember keeps Pune, ended, and makes Mumbai current.");
      await say("move", true);
      go("memory");
      await until(() => current("lives_in").then((f) => f.some((x) => /mumbai/i.test(x.object))), "Mumbai to be current");
      await sleep(PAUSE_MS);
      go("chat");
      await caption("6/8 A week on, her Wi-Fi keeps dropping. The desk remembers her name, number, router and city, and asks for none of them.");
      await say("wifi", true);
      const second = await until(() => tickets().then((ts) => ts.find((t) => t.id !== first.id)), "her second ticket");
      go("tickets");
      await caption("7/8 The resolver fixes it remotely and measures the line again before calling it fixed.");
      await stage(second.id, ["fixed"]);
      go("chat");
      await caption("8/8 She says it works, in the chat: the ticket closes on her word.");
      await say("works", false);
      await stage(second.id, ["closed"]);
      setCaptions((c) => [...c, "The story is complete: every step ran through the real agents, on this page's own tenant. Look around any screen."]);
      setDone(true);
      sessionStorage.removeItem(KEY);
    })().catch((e: Error) => setFailed(e.message));
  }, [says, go, setSession, said]);

  const last = captions[captions.length - 1];
  return (
    <aside className="judge" aria-label="Judge mode" data-testid="judge" data-done={done ? "yes" : failed ? "failed" : "no"}>
      <p role="status" aria-live="polite" className="caption" data-testid="caption">
        {failed ? `The story stopped: ${failed}` : last ?? "Judge mode is starting…"}
      </p>
      <ol hidden data-testid="captions">{captions.map((c, i) => <li key={i}>{c}</li>)}</ol>
    </aside>
  );
}
