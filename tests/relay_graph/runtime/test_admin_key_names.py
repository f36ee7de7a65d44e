"""The admin keys carry the registry graph's hash tag (one slot on a cluster); a data folder from
before, with the untagged names, is renamed once at the gateway's start."""

from __future__ import annotations

import uuid

import pytest

from relay_graph.runtime import tenancy
from relay_graph.runtime.embedded import EmbeddedFalkorDB, free_port
from relay_graph.runtime.streams import connect

pytestmark = pytest.mark.falkordb


async def test_admin_keys_of_before_are_renamed_once_and_a_name_in_use_is_left_alone(tmp_path):
    # a server of its own: the session's holds the other tests' tenants under these names
    with EmbeddedFalkorDB(tmp_path, free_port()) as server:
        redis = connect(host=server.host, port=server.port)
        try:
            t = "t-" + uuid.uuid4().hex[:8]
            await redis.hset("relay-admin:tenants", t, "digest")
            await redis.hset("relay-admin:tenant-keys", "digest", t)
            await redis.hset(tenancy.ADMIN_PREFIX + "agents", "kept", "new")  # already under the new name
            await redis.hset("relay-admin:agents", "old", "old")
            assert await tenancy.migrate_admin_keys(redis) == ["tenants", "tenant-keys"]
            assert await tenancy.tenant_registered(redis, t)
            assert await redis.hgetall(tenancy.ADMIN_PREFIX + "tenant-keys") == {b"digest": t.encode()}
            assert await redis.hgetall(tenancy.ADMIN_PREFIX + "agents") == {b"kept": b"new"}
            assert await tenancy.migrate_admin_keys(redis) == []  # once
        finally:
            await redis.aclose()
