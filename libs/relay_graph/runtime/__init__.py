"""The runtime every Relay process stands on: database access (`db.GraphClient`, the named
statement type `queries.Query`, the tenant graphs' schema), tenancy and the typed errors, Redis
Streams and delivery (`streams`), the outbox, embeddings and the model files, the embedded FalkorDB
server and cluster, heartbeats, graceful shutdown, the agents' process plumbing (`agents`) and every
process's metrics (`metrics`: the series, GET /metrics).

May use: nothing else of relay_graph. Nothing here knows about facts, tickets or the network."""
