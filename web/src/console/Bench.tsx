import Graph from "graphology";
import { useEffect, useRef, useState } from "react";
import { draw, fold, merge, synthetic, type View } from "./graph";

/** The render benchmark's page (?bench=N, &folded=1 for the whole view's folding): a synthetic
 * graph of N nodes fed to the same drawing code as the Memory page; it reports the nodes drawn,
 * time to first paint and frames per second while the camera moves. */
export function Bench({ nodes, folded = false }: { nodes: number; folded?: boolean }) {
  const box = useRef<HTMLDivElement>(null);
  const [result, setResult] = useState<string>("");
  useEffect(() => {
    const whole = synthetic(nodes);
    const g = new Graph({ type: "directed", multi: true });
    const view: View = { at: null, clock: "world", path: new Set(), selected: null };
    const start = performance.now();
    merge(g, folded ? fold(whole, new Set()) : whole);
    const s = draw(box.current!, g, () => view);
    let painted = 0;
    s.once("afterRender", () => { painted = performance.now() - start; });
    requestAnimationFrame(() => requestAnimationFrame(() => {
      const firstPaint = painted || performance.now() - start;
      let frames = 0;
      const t0 = performance.now();
      const cam = s.getCamera();
      const tick = () => {
        frames++;
        const e = performance.now() - t0;
        // A camera move redraws the frame (as a user's pan or zoom does), without re-reducing the graph.
        cam.setState({ x: 0.5 + 0.2 * Math.sin(e / 300), y: 0.5, ratio: 1 + 0.5 * Math.cos(e / 400), angle: 0 });
        if (e < 3000) requestAnimationFrame(tick);
        else setResult(JSON.stringify({ nodes: g.order, edges: g.size, folded, first_paint_ms: Math.round(firstPaint), fps: +(frames / (e / 1000)).toFixed(1) }));
      };
      requestAnimationFrame(tick);
    }));
    return () => s.kill();
  }, [nodes, folded]);
  return (
    <div>
      <div ref={box} style={{ width: 1200, height: 800 }} />
      <pre data-testid="bench-result">{result}</pre>
    </div>
  );
}
