// The customer session's API: same origin, the HttpOnly cookie rides along; no key ever here.

export const tenant: string = (() => {
  const m = window.location.pathname.match(/^\/t\/([^/]+)\/?/);
  return m ? decodeURIComponent(m[1]) : "demo";
})();

const base = `/v1/tenants/${encodeURIComponent(tenant)}`;

export class ApiError extends Error {
  constructor(public status: number, public code: string, message: string) {
    super(message);
  }
}

export async function api<T>(path: string, init?: RequestInit): Promise<T> {
  const r = await fetch(base + path, {
    credentials: "same-origin",
    headers: init?.body ? { "Content-Type": "application/json" } : undefined,
    ...init,
  });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) {
    const e = body?.error ?? {};
    throw new ApiError(r.status, e.code ?? "error", e.message ?? `HTTP ${r.status}`);
  }
  return body as T;
}

export const post = <T>(path: string, body?: unknown) =>
  api<T>(path, { method: "POST", body: body === undefined ? undefined : JSON.stringify(body) });

export type LiveEvent = {
  kind: "ticket" | "handoff" | "reply" | "fact" | "outage";
  id: string;
  at: string;
  actor: string;
  change?: string;
  session?: string;
  ticket_id?: string;
  node_id?: string;
};

/** The customer's live feed; reconnects after a drop. Returns a function that closes it. */
export function live(onEvent: (e: LiveEvent) => void, onState: (up: boolean) => void): () => void {
  let ws: WebSocket | null = null;
  let stopped = false;
  let retry: number | undefined;
  const open = () => {
    const scheme = window.location.protocol === "https:" ? "wss" : "ws";
    ws = new WebSocket(`${scheme}://${window.location.host}${base}/me/live`);
    ws.onopen = () => onState(true);
    ws.onmessage = (m) => onEvent(JSON.parse(m.data));
    ws.onclose = () => {
      onState(false);
      if (!stopped) retry = window.setTimeout(open, 2000);
    };
  };
  open();
  return () => {
    stopped = true;
    window.clearTimeout(retry);
    ws?.close();
  };
}

export type Turn = {
  episode_id: string;
  kind: string | null;
  speaker: string | null;
  text: string;
  at: string | null;
  ticket_id: string | null;
  how_i_know: string[]; // ids, for staff and agents: the site shows `sources`
  sources: string[]; // the same rows in the customer's words
};
export type Me = { tenant: string; customer: string; time_zone: string };
export type Conversation = { session: string; started_at: string | null; last_at: string | null; first_text: string | null };
export type TicketItem = { id: string; stage: string; issue: string; opened_at: string; updated_at: string };
export type TicketDetail = TicketItem & {
  summary: string;
  owner: string | null;
  // detail: the staff's words (ids, UTC); customer: the customer's (what the site shows)
  timeline: { at: string; agent: string; event: string; detail: string | null; customer: string | null }[];
  // at: when the technician goes; scheduled_at: when it was booked
  visits: { visit_id: string; technician: string; at: string; scheduled_at: string; status: string }[];
};
export type Fact = {
  fact_id: string;
  predicate: string;
  object: string;
  valid_from: string;
  valid_to: string | null;
  recorded_at: string;
  expired_at: string | null;
  asserted_by: string;
  state: string;
};
export type Hop = { node_id: string; kind: string; name: string; status: string; capacity_gbps: number; link_up: boolean | null };
export type Price = { currency: string; amount: number; tax_rate: number; display: string; display_incl_tax: string; period: string };
export type Offers = {
  country: string;
  plans: { offer_id: string; name: string; down_mbps: number; up_mbps: number; description: string; price: Price }[];
  addons: { offer_id: string; name: string; description: string; price: Price }[];
};

export type CityStatus = { city: string; hub: string; status: "degraded" | "outage"; reason: string };
export type Coverage = { cities: CityStatus[] };

// The customer's zone as the API gives it (their city's, else their browser's): every time on the
// site is shown in it, with the zone's short name, so the page and the desk's words agree.
let shownZone: string | undefined;
export function setShownZone(zone: string | null | undefined) {
  try {
    shownZone = zone ? (new Intl.DateTimeFormat(undefined, { timeZone: zone }), zone) : undefined;
  } catch {
    shownZone = undefined; // a zone this browser does not know: its own
  }
}

export const when = (iso: string | null | undefined) =>
  iso
    ? new Date(iso).toLocaleString(undefined, {
        weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit", hourCycle: "h23",
        timeZone: shownZone, timeZoneName: "short",
      })
    : "";
