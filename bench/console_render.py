"""The staff console's memory graph, drawn: `python -m bench.console_render`.

For each size (0, 1,000, 5,000, 10,000 and 20,000 nodes, about two edges a node) it opens the built
console (web/dist, served by a plain static server on a free port: the page needs no gateway for
this) in Debian's headless Chromium at `console.html?bench=N`. The page builds a synthetic graph
of N nodes mixed as the demo tenant is (four in five network equipment, in 24 cities) and draws it
with the Memory page's own code (web/src/console/graph.ts: merge, then sigma's WebGL drawing through
the same reducers), whole and folded (`&folded=1`: each city's network one node, as the whole view
starts), and reports:

- nodes drawn (folded: the cities' nodes and everything that is never folded);
- first paint: from handing the graph to the drawing code to sigma's first finished render, in ms;
- frames per second while the camera pans and zooms for three seconds (every frame redrawn).

The 0-node row is the baseline measured in the same run: the frame rate the browser gives an empty
canvas on this machine (headless Chromium draws WebGL in software, SwiftShader, on the CPU, so
figures are lower than a desktop GPU's and move with the machine's load). Results go to
bench/results/console_render.json. `--sizes 1000` runs fewer.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import json
import platform
import threading
from pathlib import Path

from relay_graph.runtime.embedded import free_port

REPO = Path(__file__).resolve().parents[1]
DIST = REPO / "web" / "dist"
RESULTS = REPO / "bench" / "results" / "console_render.json"
CHROMIUM = "/usr/bin/chromium"
SIZES = (0, 1_000, 5_000, 10_000, 20_000)
GUARD_MS = 180_000  # a guard against hanging, not a figure


@contextlib.contextmanager
def static_server(root: Path):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def measure(url: str, sizes: tuple[int, ...], folded: bool = False) -> list[dict]:
    from playwright.sync_api import sync_playwright

    out = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            for n in sizes:
                page = browser.new_page(viewport={"width": 1200, "height": 820})
                # 0 nodes: `?bench=0` would read as no benchmark, so the baseline asks for an empty graph by name.
                page.goto(f"{url}/console.html?bench={n if n else 'empty'}{'&folded=1' if folded else ''}")
                result = page.get_by_test_id("bench-result")
                page.wait_for_function("() => document.querySelector('[data-testid=bench-result]')?.textContent",
                                       timeout=GUARD_MS)
                out.append({"nodes_asked": n, "folded": folded, **json.loads(result.inner_text())})
                page.close()
        finally:
            browser.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=lambda s: tuple(int(x) for x in s.split(",")), default=SIZES)
    args = parser.parse_args()
    if not (DIST / "console.html").is_file():
        raise SystemExit(f"{DIST / 'console.html'} is missing: run `make install` first")
    sizes = args.sizes if 0 in args.sizes else (0, *args.sizes)
    with static_server(DIST) as url:
        rows = measure(url, sizes) + measure(url, tuple(n for n in sizes if n), folded=True)
    print(f"{'nodes':>12} {'view':>7} {'drawn':>7} {'edges':>7} {'first paint ms':>15} {'fps':>6}")
    for r in rows:
        label = "0 (baseline)" if r["nodes_asked"] == 0 else str(r["nodes_asked"])
        view = "folded" if r["folded"] else "whole"
        print(f"{label:>12} {view:>7} {r['nodes']:>7} {r['edges']:>7} {r['first_paint_ms']:>15} {r['fps']:>6}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"machine": platform.platform(), "renderer": "sigma 3 (WebGL, SwiftShader)",
                                   "rows": rows}, indent=2) + "\n")
    print(f"-> {RESULTS.relative_to(REPO)}")


if __name__ == "__main__":
    main()
