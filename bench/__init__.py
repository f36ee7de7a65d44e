"""Relay's benchmarks: speed lives here, never in timed tests. `make bench` runs bench.suite
(every benchmark but the fault lab and extraction, which run on their own)."""

# The benchmarks measure the support desk's workload: its vocabulary (the predicates they write)
# and its indexes are loaded with the desk.
import relay_graph.desk  # noqa: E402,F401
