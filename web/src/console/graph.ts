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
export type View = { at: number | null; clock: Clock; path: Set<string>; selected: string | null };

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

/** Merges an answer into `g`: adds what is new, updates what changed, drops what is gone. */
export function merge(g: Graph, data: ConsoleGraph): { added: number } {
  const seen = new Set<string>();
  let added = 0;
  const byId = new Map(data.nodes.map((n) => [n.id, n]));
  const neighbour = new Map<string, string>();
  for (const e of data.edges) {
    if (!neighbour.has(e.target)) neighbour.set(e.target, e.source);
    if (!neighbour.has(e.source)) neighbour.set(e.source, e.target);
  }
  for (const n of data.nodes) {
    seen.add(n.id);
    if (g.hasNode(n.id)) {
      g.mergeNodeAttributes(n.id, { node: n });
      continue;
    }
    const h = hash(n.id);
    const near = neighbour.get(n.id);
    const at = near && g.hasNode(near)
      ? { x: g.getNodeAttribute(near, "x") + ((h % 100) - 50) / 25, y: g.getNodeAttribute(near, "y") + (((h >> 8) % 100) - 50) / 25 }
      : sector(n.band, h);
    g.addNode(n.id, { ...at, size: n.kind === "Fact" ? 4 : 3, label: n.name || n.kind, node: n });
    added++;
  }
  g.forEachNode((id) => { if (!seen.has(id)) g.dropNode(id); });
  const edges = new Set<string>();
  for (const e of data.edges) {
    if (!byId.has(e.source) || !byId.has(e.target)) continue;
    const k = edgeKey(e);
    edges.add(k);
    if (!g.hasEdge(k)) g.addDirectedEdgeWithKey(k, e.source, e.target, { size: 1, edge: e });
  }
  g.forEachEdge((k) => { if (!edges.has(k)) g.dropEdge(k); });
  return { added };
}

/** A few rounds of ForceAtlas2 where it is cheap; a big graph keeps its sector layout. */
export function settle(g: Graph, rounds = 150): void {
  if (g.order === 0 || g.order > 3000) return;
  forceAtlas2.assign(g, { iterations: rounds, settings: { ...forceAtlas2.inferSettings(g), slowDown: 2, gravity: 0.5, scalingRatio: 8 } });
}

export function draw(container: HTMLElement, g: Graph, view: () => View): Sigma {
  return new Sigma(g, container, {
    renderEdgeLabels: false,
    labelRenderedSizeThreshold: 9,
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
        forceLabel: onPath || v.selected === id,
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

/** A synthetic graph of `n` nodes in the five bands (about two edges a node), for the benchmark. */
export function synthetic(n: number): ConsoleGraph {
  const nodes: GNode[] = [];
  const edges: GEdge[] = [];
  const kinds: Record<Band, string> = { episodic: "Episode", semantic: "Fact", disagreement: "Agent", procedural: "Ticket", network: "Olt" };
  for (let i = 0; i < n; i++) {
    const band = BANDS[i % 5];
    nodes.push({ id: `n${i}`, kind: kinds[band], labels: [kinds[band]], band, name: `${kinds[band]} ${i}`, predicate: null,
      subject: null, valid_from_ms: null, valid_to_ms: null, recorded_at_ms: null, expired_at_ms: null, believed_from_ms: null, at_ms: null });
    if (i > 0) edges.push({ source: `n${i}`, target: `n${hash(`a${i}`) % i}`, type: "LINK", band, valid_from_ms: null, valid_to_ms: null });
    if (i > 5) edges.push({ source: `n${i}`, target: `n${hash(`b${i}`) % i}`, type: "LINK", band, valid_from_ms: null, valid_to_ms: null });
  }
  return { tenant: "bench", nodes, edges, truncated: false };
}
