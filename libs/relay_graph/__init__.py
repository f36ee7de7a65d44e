"""Relay's memory engine: the one place that speaks Cypher to FalkorDB."""
