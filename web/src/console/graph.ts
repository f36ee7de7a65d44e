// The memory graph on a canvas: graphology holds it (a multigraph: two nodes may share several
// edge types), sigma draws it with WebGL. The page keeps
// one Graph and merges each fresh answer into it (new nodes appear next to a neighbour, gone ones
// leave), so the picture grows as agents write instead of being redrawn from scratch.

import Graph from "graphology";
import forceAtlas2 from "graphology-layout-forceatlas2";
import Sigma from "sigma";
import type { Band, ConsoleGraph, GEdge, GNode } from "./api";

export const BAND_COLOURS: Record<Band, string> = {
  episodic: "#4e79a7", semantic: "#59a14f", disagreement: "#e15759", procedural: "#f28e2b", network: "#8c6d5a",
};
export const BANDS = Object.keys(BAND_COLOURS) as Band[];
const FADED = "#d5dbe1";
const PATH = "#7b2cbf";

export type Clock = "world" | "belief";
export type NodeState = "now" | "past" | "hidden";
/** What the drawing shows: the replay instant (null: now), its clock, a highlighted path, a selection. */
export type View = { at: number | null; clock: Clock; path: Set<string>; selected: string | null; focus?: string | null };

function sector(band: Band, seed: number): { x: number; y: number } {
  // Each band starts in its own sector of a disc, so the bands read apart before any layout.
  const i = BANDS.indexOf(band);
  const a = ((i + (seed % 1000) / 1000) / BANDS.length) * 2 * Math.PI;
  const r = 20 + ((seed * 7919) % 1000) / 10;
  return { x: Math.cos(a) * r, y: Math.sin(a) * r };
}

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** When a node is true, at `at` on `clock`: now, in the past (faded), or not yet (hidden). */
export function stateAt(n: GNode, at: number | null, clock: Clock): NodeState {
  const ended = n.labels.includes("Superseded") || n.labels.includes("Retired");
  if (at === null) return ended ? "past" : "now";
  if (n.kind === "Fact" || n.labels.includes("Fact")) {
    const from = clock === "world" ? n.valid_from_ms : (n.believed_from_ms ?? n.recorded_at_ms);
    const to = clock === "world" ? n.valid_to_ms : n.expired_at_ms;
    if (from !== null && from > at) return "hidden";
    return to !== null && to <= at ? "past" : "now";
  }
  const born = n.at_ms ?? n.recorded_at_ms;
  return born !== null && born > at ? "hidden" : "now";
}

const edgeKey = (e: GEdge) => `${e.source}>${e.type}>${e.target}`;

/** Where nodes were last drawn, by id: kept per tenant, so a reload draws the same picture. */
export type Layout = Record<string, [number, number]>;
const LAYOUT_KEY = (tenant: string) => `relay-console-layout:${tenant}`;

export function loadLayout(tenant: string): Layout {
  try { return JSON.parse(localStorage.getItem(LAYOUT_KEY(tenant)) ?? "{}") as Layout; } catch { return {}; }
}

export function saveLayout(tenant: string, g: Graph): void {
  // kept over what was saved before: a folded group's place stays while it is open, for when it folds again
  const out: Layout = loadLayout(tenant);
  g.forEachNode((id, a) => { out[id] = [Math.round(a.x * 100) / 100, Math.round(a.y * 100) / 100]; });
  try { localStorage.setItem(LAYOUT_KEY(tenant), JSON.stringify(out)); } catch { /* full: the layout is a nicety */ }
}

/** A group's folded node: one node for a city's network (or the core, or the catalogue). */
export const GROUP_PREFIX = "group:";
export const isGroup = (id: string) => id.startsWith(GROUP_PREFIX);

/** The whole view as drawn: every node of a group not in `expanded` folded into one node for the
 * group ("Pune · 212 network nodes"), its edges moved to that node (once per pair and type). */
export function fold(data: ConsoleGraph, expanded: Set<string>): ConsoleGraph {
  const members = new Map<string, GNode[]>();
  for (const n of data.nodes) if (n.group && !expanded.has(n.group)) members.set(n.group, [...(members.get(n.group) ?? []), n]);
  if (members.size === 0) return data;
  const into = new Map<string, string>();
  const nodes: GNode[] = data.nodes.filter((n) => !(n.group && members.has(n.group)));
  for (const [group, ns] of [...members.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const id = GROUP_PREFIX + group;
    for (const n of ns) into.set(n.id, id);
    const what = group === "Catalogue" ? "catalogue entries" : group === "Core" ? "core nodes" : "network nodes";
    nodes.push({ id, kind: "Group", labels: ["Group"], band: ns[0].band, name: `${group} · ${ns.length} ${what}`, predicate: null,
      subject: null, valid_from_ms: null, valid_to_ms: null, recorded_at_ms: null, expired_at_ms: null, believed_from_ms: null,
      at_ms: null, group, members: ns.length });
  }
  const seen = new Set<string>();
  const edges: GEdge[] = [];
  for (const e of data.edges) {
    const source = into.get(e.source) ?? e.source;
    const target = into.get(e.target) ?? e.target;
    if (source === target) continue;
    const moved = { ...e, source, target };
    const k = edgeKey(moved);
    if (seen.has(k)) continue;
    seen.add(k);
    edges.push(moved);
  }
  return { ...data, nodes, edges };
}

function sizeOf(n: GNode): number {
  if (n.kind === "Group") return 8 + 2 * Math.log2(1 + (n.members ?? 1));
  if (n.kind === "Customer") return 7;
  return n.kind === "Fact" ? 4 : 3;
}

/** Where a node starts when nothing placed it yet: groups on a circle in name order, the rest by
 * band near the middle, a member of a group around its group's place; all from the id's hash. */
function seeded(n: GNode, groups: string[], h: number): { x: number; y: number } {
  const g = n.group ? groups.indexOf(n.group) : -1;
  if (g >= 0) {
    const a = (g / Math.max(1, groups.length)) * 2 * Math.PI;
    const r = n.kind === "Group" ? 0 : 4 + (h % 1000) / 100;
    const b = ((h >> 10) % 360) * (Math.PI / 180);
    return { x: Math.cos(a) * 160 + Math.cos(b) * r, y: Math.sin(a) * 160 + Math.sin(b) * r };
  }
  return sector(n.band, h);
}

/** Merges an answer into `g`: adds what is new, updates what changed, drops what is gone. A new
 * node goes where `layout` last had it, else next to a neighbour already drawn, else its seeded place. */
export function merge(g: Graph, data: ConsoleGraph, layout: Layout = {}): { added: number } {
  const seen = new Set<string>();
  let added = 0;
  const byId = new Map(data.nodes.map((n) => [n.id, n]));
  const neighbour = new Map<string, string>();
  const sortedEdges = [...data.edges].sort((a, b) => edgeKey(a).localeCompare(edgeKey(b)));
  for (const e of sortedEdges) {
    if (!neighbour.has(e.target)) neighbour.set(e.target, e.source);
    if (!neighbour.has(e.source)) neighbour.set(e.source, e.target);
  }
  const groups = [...new Set(data.nodes.map((n) => n.group).filter((x): x is string => !!x))].sort();
  const groupAt = new Map<string, { x: number; y: number }>();  // a folded group's place: its members expand around it
  g.forEachNode((id, a) => { if (isGroup(id)) groupAt.set(id.slice(GROUP_PREFIX.length), { x: a.x, y: a.y }); });
  for (const n of [...data.nodes].sort((a, b) => a.id.localeCompare(b.id))) {
    seen.add(n.id);
    if (g.hasNode(n.id)) {
      g.mergeNodeAttributes(n.id, { node: n, label: n.name || n.kind, size: sizeOf(n) });
      continue;
    }
    const h = hash(n.id);
    const near = neighbour.get(n.id);
    const from = n.group && n.kind !== "Group" ? groupAt.get(n.group) : undefined;
    const at = layout[n.id] ? { x: layout[n.id][0], y: layout[n.id][1] }
      : from ? { x: from.x + ((h % 100) - 50) / 10, y: from.y + (((h >> 8) % 100) - 50) / 10 }
      : near && g.hasNode(near)
        ? { x: g.getNodeAttribute(near, "x") + ((h % 100) - 50) / 25, y: g.getNodeAttribute(near, "y") + (((h >> 8) % 100) - 50) / 25 }
        : seeded(n, groups, h);
    g.addNode(n.id, { ...at, size: sizeOf(n), label: n.name || n.kind, node: n });
    added++;
  }
  g.forEachNode((id) => { if (!seen.has(id)) g.dropNode(id); });
  const edges = new Set<string>();
  for (const e of sortedEdges) {
    if (!byId.has(e.source) || !byId.has(e.target)) continue;
    const k = edgeKey(e);
    edges.add(k);
    if (!g.hasEdge(k)) g.addDirectedEdgeWithKey(k, e.source, e.target, { size: 1, edge: e });
  }
  g.forEachEdge((k) => { if (!edges.has(k)) g.dropEdge(k); });
  return { added };
}

/** A few rounds of ForceAtlas2 where it is cheap; a big graph keeps its seeded layout. Deterministic:
 * the same nodes, added in the same (sorted) order, settle to the same places. */
export function settle(g: Graph, rounds = 150): void {
  if (g.order === 0 || g.order > 3000) return;
  forceAtlas2.assign(g, { iterations: rounds, settings: { ...forceAtlas2.inferSettings(g), slowDown: 2, gravity: 0.5, scalingRatio: 8 } });
  // two nodes started on one spot divide by a zero distance: such a node goes back to its seeded place
  g.forEachNode((id, a) => {
    if (!Number.isFinite(a.x) || !Number.isFinite(a.y)) g.mergeNodeAttributes(id, sector((a.node as GNode).band, hash(id)));
  });
}

export function draw(container: HTMLElement, g: Graph, view: () => View): Sigma {
  return new Sigma(g, container, {
    renderEdgeLabels: false,
    labelRenderedSizeThreshold: 6,  // groups and customers are labelled in the whole view; a focus labels all
    defaultEdgeColor: "#c3cad2",
    nodeReducer: (id, attrs) => {
      const v = view();
      const n = attrs.node as GNode;
      const state = stateAt(n, v.at, v.clock);
      const onPath = v.path.has(id);
      return {
        ...attrs,
        hidden: state === "hidden",
        color: onPath ? PATH : state === "past" ? FADED : BAND_COLOURS[n.band],
        size: onPath || v.selected === id ? attrs.size * 2.2 : attrs.size,
        highlighted: v.selected === id,
        zIndex: onPath ? 2 : 1,
        forceLabel: onPath || v.selected === id || v.focus === id,
      };
    },
    edgeReducer: (id, attrs) => {
      const v = view();
      const [s, t] = g.extremities(id);
      const hidden = stateAt(g.getNodeAttribute(s, "node"), v.at, v.clock) === "hidden" ||
        stateAt(g.getNodeAttribute(t, "node"), v.at, v.clock) === "hidden";
      const onPath = v.path.has(s) && v.path.has(t);
      const e = attrs.edge as GEdge;
      return { ...attrs, hidden, color: onPath ? PATH : `${BAND_COLOURS[e.band]}99`, size: onPath ? 3 : 1, zIndex: onPath ? 2 : 0 };
    },
  });
}

/** A synthetic graph of `n` nodes (about two edges a node) for the benchmark, mixed as the demo
 * tenant is: four in five are network equipment in one of 24 cities (what the whole view folds),
 * the rest spread over the other four bands. */
export function synthetic(n: number): ConsoleGraph {
  const nodes: GNode[] = [];
  const edges: GEdge[] = [];
  const kinds: Record<Band, string> = { episodic: "Episode", semantic: "Fact", disagreement: "Agent", procedural: "Ticket", network: "Olt" };
  const others: Band[] = ["episodic", "semantic", "disagreement", "procedural"];
  for (let i = 0; i < n; i++) {
    const band: Band = i % 5 === 4 ? others[(i / 5 | 0) % 4] : "network";
    const group = band === "network" ? `City ${hash(`c${i}`) % 24}` : null;
    nodes.push({ id: `n${i}`, kind: kinds[band], labels: [kinds[band]], band, name: `${kinds[band]} ${i}`, predicate: null,
      subject: null, valid_from_ms: null, valid_to_ms: null, recorded_at_ms: null, expired_at_ms: null, believed_from_ms: null,
      at_ms: null, group });
    if (i > 0) edges.push({ source: `n${i}`, target: `n${hash(`a${i}`) % i}`, type: "LINK", band, valid_from_ms: null, valid_to_ms: null });
    if (i > 5) edges.push({ source: `n${i}`, target: `n${hash(`b${i}`) % i}`, type: "LINK", band, valid_from_ms: null, valid_to_ms: null });
  }
  return { tenant: "bench", nodes, edges, truncated: false };
}
