"""The public demo tenant `relay up` creates: the tenant the customer site at `/` serves, its site
opened and its region's world seeded, so a visitor can chat, get a ticket and see plans at once.

Created once per data folder: a later start finds it (409) and leaves it as it is. Its key is kept
in the data folder (mode 0600) for exploring it with the API."""

from __future__ import annotations

import os
from pathlib import Path

import httpx

DEMO_TENANT = "demo"
DEMO_REGION = "india"
KEY_FILE = "demo-tenant.key"


def open_demo_site(base_url: str, admin_key: str, data_dir: Path, *, timeout: float = 120.0) -> str:
    """Creates the demo tenant with its world and opens its site; returns what happened, in words."""
    with httpx.Client(base_url=base_url, timeout=timeout) as http:
        r = http.post("/v1/tenants", json={"tenant": DEMO_TENANT, "region": DEMO_REGION}, headers={"Authorization": f"Bearer {admin_key}"})
        if r.status_code == 409:
            return f"the customer site at {base_url}/ serves tenant {DEMO_TENANT!r} (created on an earlier start)"
        r.raise_for_status()
        key = r.json()["api_key"]
        path = data_dir / KEY_FILE
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(key + "\n")
        auth = {"Authorization": f"Bearer {key}"}
        http.put(f"/v1/tenants/{DEMO_TENANT}/site", json={"open": True}, headers=auth).raise_for_status()
    return (f"the customer site at {base_url}/ serves the new tenant {DEMO_TENANT!r} ({DEMO_REGION} seeded; "
            f"its key is in {path})")
