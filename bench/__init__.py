"""Relay's benchmarks: speed lives here, never in timed tests. `make bench` runs bench.suite
(every benchmark but the fault lab and extraction, which run on their own)."""
