import { useCallback, useEffect, useMemo, useState } from "react";
import { ApiError, c, call, live, t } from "./api";

type MapNode = { node_id: string; kind: "Pop" | "Olt" | "Backbone"; name: string; up: boolean; capacity_gbps: number | null;
  lat: number; lon: number; placed: string; city: string | null };
type MapLink = { source: string; target: string; up: boolean; backup: boolean; capacity_gbps: number | null };
type Outage = { outage_id: string; node_id: string; opened_at_ms: number | null; cause: string | null; customers: number };
type NetMap = { nodes: MapNode[]; links: MapLink[]; outages: Outage[]; unplaced: number };
type Affected = { node: string; customers: { customer: string; path: string[] }[] };

const W = 900, H = 600, PAD = 30;

type At = Map<string, { x: number; y: number; n: MapNode }>;
/** Equirectangular, true at the middle latitude, fitted into w x h. */
function project(nodes: MapNode[], w: number, h: number, pad: number): At {
  const lats = nodes.map((n) => n.lat), lons = nodes.map((n) => n.lon);
  const [minLat, maxLat, minLon, maxLon] = [Math.min(...lats), Math.max(...lats), Math.min(...lons), Math.max(...lons)];
  const k = Math.cos(((minLat + maxLat) / 2) * Math.PI / 180);
  const sx = ((maxLon - minLon) * k) || 1e-3, sy = (maxLat - minLat) || 1e-3;
  const s = Math.min((w - 2 * pad) / sx, (h - 2 * pad) / sy);
  const ox = (w - sx * s) / 2, oy = (h - sy * s) / 2;
  return new Map(nodes.map((n) => [n.node_id, { x: ox + (n.lon - minLon) * k * s, y: oy + (maxLat - n.lat) * s, n }]));
}
const KIND = { Pop: "hub", Olt: "exchange", Backbone: "core" } as const;

/** The region as a map: hubs and exchanges at the footprint's coordinates (the gazetteer's), cores
 * at the middle of their hubs, uplinks, open outages as they are declared, and the paths behind
 * "who is affected" for a node picked on the map. */
export function RegionMap({ admin }: { admin: boolean }) {
  const [map, setMap] = useState<NetMap | null>(null);
  const [picked, setPicked] = useState<string | null>(null);
  const [affected, setAffected] = useState<Affected | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const reload = useCallback(() => { call<NetMap>(c("/network/map")).then(setMap).catch((e) => setProblem(String(e.message ?? e))); }, []);
  useEffect(() => {
    reload();
    const i = window.setInterval(reload, 2000);
    const stop = live((e) => { if (e.kind === "outage") reload(); }, () => undefined);  // outages at once
    return () => { clearInterval(i); stop(); };
  }, [reload]);
  const pick = async (id: string) => {
    setPicked(id); setAffected(null); setProblem(null);
    if (admin) return;  // "who is affected" is a tenant route: the tenant's own key
    try { setAffected(await call<Affected>(t(`/network/affected?node=${encodeURIComponent(id)}`))); }
    catch (err) { setProblem(err instanceof ApiError ? err.message : String(err)); }
  };
  const view = useMemo(() => (map && map.nodes.length ? project(map.nodes.filter((n) => n.kind !== "Olt" || !map.nodes.some((h) => h.kind === "Pop" && h.city === n.city)), W, H, PAD) : null), [map]);
  const city = picked ? map?.nodes.find((n) => n.node_id === picked)?.city ?? null : null;
  const inset = useMemo(() => (map && city ? project(map.nodes.filter((n) => n.city === city), 300, 220, 24) : null), [map, city]);
  const byId = useMemo(() => new Map((map?.nodes ?? []).map((n) => [n.node_id, n])), [map]);
  const outageAt = useMemo(() => new Map((map?.outages ?? []).map((o) => [o.node_id, o])), [map]);
  const onPath = useMemo(() => new Set(affected?.customers.flatMap((x) => x.path) ?? []), [affected]);
  const pathLinks = useMemo(() => new Set(affected?.customers.flatMap((x) => x.path.slice(1).map((b, i) => `${x.path[i]}>${b}`)) ?? []), [affected]);
  if (!map) return <section className="card"><p className="muted">Loading the map…</p></section>;
  // Exchanges over hubs: a city's central exchange stands where its hub does.
  const draw = (at: At, region: boolean) => [...at.values()].sort((a, b) => Number(a.n.kind === "Olt") - Number(b.n.kind === "Olt")).map(({ x, y, n }) => {
    const outage = outageAt.get(n.node_id);
    const r = n.kind === "Olt" ? (region ? 3.5 : 4) : region ? 7 : 9;
    const label = `${n.name}, ${KIND[n.kind]}, ${n.up ? "up" : "down"}${outage ? `, outage reaching ${outage.customers} customers` : ""}`;
    return (
      <g key={n.node_id} className={`mapnode ${n.kind}${n.up ? "" : " down"}${outage ? " outage" : ""}${onPath.has(n.node_id) ? " onpath" : ""}${picked === n.node_id ? " picked" : ""}`}
        data-testid={region ? "map-node" : "inset-node"} data-node={n.node_id} data-up={n.up ? "yes" : "no"} data-outage={outage ? "yes" : "no"}
        role="button" tabIndex={0} aria-label={label} onClick={() => pick(n.node_id)}
        onKeyDown={(e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); pick(n.node_id); } }}>
        <title>{label}</title>
        {outage && <circle cx={x} cy={y} r={r + 7} className="ring" />}
        {n.kind === "Backbone" ? <rect x={x - 7} y={y - 7} width={14} height={14} transform={`rotate(45 ${x} ${y})`} />
          : <circle cx={x} cy={y} r={r} />}
        {(region ? n.kind !== "Olt" : n.kind === "Olt") && <text x={x + 9} y={y + 4}>{n.kind === "Pop" ? n.city : n.kind === "Olt" ? n.name.replace(/ exchange \(.*\)$/, "") : n.name}</text>}
        {!region && n.kind === "Pop" && <text x={x + 9} y={y + 4}>{n.name}</text>}
      </g>);
  });
  const lines = (at: At) => map.links.map((l) => {
    const a = at.get(l.source), b = at.get(l.target);
    if (!a || !b) return null;
    const hot = pathLinks.has(`${l.source}>${l.target}`);
    return <line key={`${l.source}>${l.target}`} x1={a.x} y1={a.y} x2={b.x} y2={b.y}
      className={`link${l.up ? "" : " down"}${l.backup ? " backup" : ""}${hot ? " onpath" : ""}`} />;
  });
  return (
    <section className="card regionmap" data-testid="region-map" data-nodes={map.nodes.length} data-outages={map.outages.length}>
      <h3>The region <span className="muted small">{map.nodes.filter((n) => n.kind === "Pop").length} hubs and {map.nodes.filter((n) => n.kind === "Olt").length} exchanges at the footprint's coordinates (the gazetteer's; a city's exchanges are a few km apart: pick its hub to see them); cores at the middle of their hubs{map.unplaced ? ` · ${map.unplaced} nodes with no place, not drawn` : ""}</span></h3>
      {problem && <p className="problem">{problem}</p>}
      <div className="maprow">
        <svg viewBox={`0 0 ${W} ${H}`} role="group" aria-label="Map of the region's hubs and exchanges" data-testid="map">
          {view && lines(view)}
          {view && draw(view, true)}
        </svg>
        <div className="mapside">
          {inset && city && (<>
            <h4>{city}: its hub and exchanges</h4>
            <svg viewBox="0 0 300 220" role="group" aria-label={`${city}'s hub and exchanges`} data-testid="inset" className="inset">{lines(inset)}{draw(inset, false)}</svg>
          </>)}
          <h4>Open outages</h4>
          {map.outages.length === 0 ? <p className="muted small">None.</p> : (
            <ul className="small" data-testid="outages">{map.outages.map((o) => (
              <li key={o.outage_id} data-testid="outage" data-node={o.node_id}>
                <button className="link" onClick={() => pick(o.node_id)}>{byId.get(o.node_id)?.name ?? o.node_id}</button>: {o.customers} customer(s) · {o.cause}
                {o.opened_at_ms ? <span className="muted"> · since {new Date(o.opened_at_ms).toLocaleTimeString()}</span> : null}</li>))}</ul>)}
          <h4>Who is affected</h4>
          {!picked ? <p className="muted small">Pick a hub or an exchange on the map (Tab, then Enter).</p> : admin ? <p className="muted small">Needs the tenant's key.</p> : !affected ? <p className="muted small">Looking…</p> : (
            <div data-testid="affected" data-node={affected.node}>
              <p className="small"><b>{byId.get(affected.node)?.name ?? affected.node}</b>: {affected.customers.length} customer(s) cut off if it fails (on top of what is down now)</p>
              <ol className="small paths">{affected.customers.slice(0, 50).map((x) => (
                <li key={x.customer} data-testid="affected-customer"><b>{x.customer}</b>: <span className="muted">{x.path.map((id) => byId.get(id)?.name ?? id).join(" → ")}</span></li>))}</ol>
            </div>)}
        </div>
      </div>
      <p className="muted small legendline"><span className="key hub" /> hub <span className="key exchange" /> exchange <span className="key core" /> core <span className="key downkey" /> down <span className="key ringkey" /> outage · dashed: a standby uplink · thick: the paths behind who is affected</p>
    </section>
  );
}
