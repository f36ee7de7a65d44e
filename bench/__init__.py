"""Relay's benchmarks: speed lives here, never in timed tests. `make bench` runs bench.memory_core."""
