// The console's API client. The key lives in this module's memory only: never in a URL, a
// cookie or storage, so closing (or reloading) the tab signs out.

let key: string | null = null;
let tenant: string | null = null;

export const signIn = (k: string) => { key = k; };
export const signOut = () => { key = null; tenant = null; };
export const useTenant = (t: string) => { tenant = t; };
export const currentTenant = () => tenant ?? "";

export class ApiError extends Error {
  constructor(public status: number, public code: string, message: string) {
    super(message);
  }
}

export async function call<T>(path: string, init?: RequestInit): Promise<T> {
  const headers: Record<string, string> = { Authorization: `Bearer ${key ?? ""}` };
  if (init?.body) headers["Content-Type"] = "application/json";
  const r = await fetch(path, { ...init, headers, credentials: "omit" });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) {
    const e = body?.error ?? {};
    throw new ApiError(r.status, e.code ?? "error", e.message ?? `HTTP ${r.status}`);
  }
  return body as T;
}

const enc = encodeURIComponent;
/** A route of the signed-in tenant: /v1/tenants/{t}{path} */
export const t = (path: string) => `/v1/tenants/${enc(currentTenant())}${path}`;
/** A console route of the signed-in tenant: /v1/console/tenants/{t}{path} */
export const c = (path: string) => `/v1/console/tenants/${enc(currentTenant())}${path}`;
export const qs = (params: Record<string, string | number | undefined>) =>
  "?" + Object.entries(params).filter(([, v]) => v !== undefined && v !== "")
    .map(([k, v]) => `${enc(k)}=${enc(String(v))}`).join("&");
export const post = <T>(path: string, body: unknown) => call<T>(path, { method: "POST", body: JSON.stringify(body) });

export type LiveEvent = { kind: string; id?: string; at?: string; actor?: string; change?: string; ticket_id?: string };

/** The tenant's live events; the key goes in the first message, not the URL. Reconnects. */
export function live(onEvent: (e: LiveEvent) => void, onState: (up: boolean) => void): () => void {
  let ws: WebSocket | null = null;
  let stopped = false;
  let retry = 500;
  const open = () => {
    const proto = location.protocol === "https:" ? "wss" : "ws";
    ws = new WebSocket(`${proto}://${location.host}${c("/live")}`);
    ws.onopen = () => ws?.send(JSON.stringify({ token: key }));
    ws.onmessage = (m) => {
      const e = JSON.parse(m.data) as LiveEvent;
      if (e.kind === "ready") { retry = 500; onState(true); }
      onEvent(e);
    };
    ws.onclose = (ev) => {
      onState(false);
      if (!stopped && ev.code !== 4401 && ev.code !== 4403) setTimeout(open, (retry = Math.min(retry * 2, 8000)));
    };
  };
  open();
  return () => { stopped = true; ws?.close(); };
}

// ------------------------------------------------------------------ the shapes the pages read

export type Band = "episodic" | "semantic" | "disagreement" | "procedural" | "network";
export type GNode = {
  id: string; kind: string; labels: string[]; band: Band; name: string; predicate: string | null;
  subject: string | null; valid_from_ms: number | null; valid_to_ms: number | null; recorded_at_ms: number | null;
  expired_at_ms: number | null; believed_from_ms: number | null; at_ms: number | null;
  group?: string | null; members?: number;
};
export type GEdge = { source: string; target: string; type: string; band: Band; valid_from_ms: number | null; valid_to_ms: number | null };
export type ConsoleGraph = { tenant: string; nodes: GNode[]; edges: GEdge[]; truncated: boolean; focus?: string | null };
export type Found = { id: string; node: string; name: string; why: string };
export type SearchAnswer = { asked: string; how: "ticket" | "id" | "phone" | "name" | "fuzzy" | "none"; customers: Found[]; did_you_mean: string | null };
export type ClockRow = { fact_id: string; predicate: string; object: string | null; state: string; kind: "late" | "ahead" | "corrected";
  valid_from_ms: number | null; recorded_at_ms: number | null; sentence: string };
export type Whoami = { admin: boolean; tenant: string | null; agent: string | null; tenants: string[] };
export type FactView = {
  fact_id: string; subject: string; predicate: string; object: string; valid_from: string; valid_to: string | null;
  recorded_at: string; expired_at: string | null; asserted_by: string; state: string;
};
export type RecallResult = {
  shape: string; facts: FactView[];
  items: { episode_id: string; speaker: string; text: string; at: string; score: number; path: string[] }[];
};
export type Claim = { fact_id: string; object: string; asserted_by: string; trust: number; recorded_at: string };
export type OpenConflict = { conflict_id: string; subject: string | null; subject_name: string | null; predicate: string | null; opened_at_ms: number | null };
