import { useCallback, useEffect, useState } from "react";
import { ApiError, c, call } from "./api";

type Control = { running: boolean; speed: number; version: number; updated_at_ms: number | null; by: string | null };
type Status = { state: string; round: number; sim_hours: number; speed: number; control_version: number;
  doing: { customer: string; what: string; since_ms: number }[]; events: number; turns: number; tickets: number;
  errors: number; reported_at_ms: number; live: boolean };
type Sim = { tenant: string; control: Control | null; status: Status | null };

const SPEEDS = [0.5, 1, 2, 3, 4, 5, 6, 7, 8];

/** The simulated customers: start, stop, their speed, and what they are doing now, through the
 * control key the simulator process reads about once a second. */
export function Simulator() {
  const [sim, setSim] = useState<Sim | null>(null);
  const [speed, setSpeed] = useState(1);
  const [problem, setProblem] = useState<string | null>(null);
  const reload = useCallback(() => { call<Sim>(c("/simulator")).then((s) => { setSim(s); }).catch((e) => setProblem(String(e.message ?? e))); }, []);
  useEffect(() => { reload(); const i = window.setInterval(reload, 1000); return () => clearInterval(i); }, [reload]);
  useEffect(() => { const s = sim?.control?.speed ?? sim?.status?.speed; if (s) setSpeed(s); }, [sim?.control?.version, sim?.status?.live]);  // eslint-disable-line react-hooks/exhaustive-deps
  const send = async (running: boolean, at: number) => {
    setProblem(null);
    try { await call<Control>(c("/simulator"), { method: "PUT", body: JSON.stringify({ running, speed: at }) }); reload(); }
    catch (e) { setProblem(e instanceof ApiError ? e.message : String(e)); }
  };
  const status = sim?.status ?? null;
  const running = sim?.control ? sim.control.running : status ? status.state !== "stopped" : true;
  const applied = status && sim?.control ? status.control_version >= sim.control.version : true;
  return (
    <div className="simulator two">
      <section className="card" data-testid="sim-control">
        <h3>Simulated customers <span className="muted small">the simulator process reads this about once a second</span></h3>
        <p className="row">
          <button onClick={() => send(true, speed)} disabled={running && applied}>Start</button>
          <button onClick={() => send(false, speed)} disabled={!running && applied}>Stop</button>
        </p>
        <p className="row">
          <label htmlFor="sim-speed">Speed</label>
          <input id="sim-speed" type="range" min={0} max={SPEEDS.length - 1} step={1} value={Math.max(0, SPEEDS.indexOf(speed))}
            aria-valuetext={`${speed} simulated hours a second`} onChange={(e) => setSpeed(SPEEDS[Number(e.target.value)])}
            onKeyUp={(e) => { if (e.key === "Enter") send(running, speed); }} />
          <output htmlFor="sim-speed" data-testid="sim-speed">{speed} simulated h/s</output>
          <button onClick={() => send(running, speed)}>Set speed</button>
        </p>
        <p className="muted small" data-testid="sim-asked">
          {sim?.control ? `Asked: ${sim.control.running ? "playing" : "stopped"} at ${sim.control.speed} h/s (control ${sim.control.version}${applied ? ", applied" : ", not applied yet"})` : "Never set: the simulator plays at its own settings (RELAY_SPEED)."}
        </p>
        {problem && <p className="problem">{problem}</p>}
      </section>
      <section className="card" data-testid="sim-status" data-state={status?.state ?? "none"} data-live={status?.live ? "yes" : "no"}
        data-speed={status?.speed ?? ""} data-applied={status?.control_version ?? ""}>
        <h3>What they are doing now <span className="muted small">{status ? (status.live ? `reported ${new Date(status.reported_at_ms).toLocaleTimeString()}` : "no simulator has reported for ten seconds") : "no simulator has reported for this tenant"}</span></h3>
        {status && (<>
          <p><b data-testid="sim-state">{status.state}</b> · round {status.round} · {status.sim_hours.toFixed(1)} simulated hours in · {status.speed} h/s · {status.events} events, {status.turns} turns, {status.tickets} tickets{status.errors ? `, ${status.errors} errors` : ""}</p>
          {status.doing.length === 0 ? <p className="muted">Nobody is doing anything this moment.</p> : (
            <table className="small"><thead><tr><th>customer</th><th>doing</th><th>since</th></tr></thead>
              <tbody>{status.doing.map((d) => (
                <tr key={d.customer} data-testid="sim-doing"><td><b>{d.customer}</b></td><td>{d.what}</td><td>{new Date(d.since_ms).toLocaleTimeString()}</td></tr>))}</tbody></table>)}
        </>)}
      </section>
    </div>
  );
}
