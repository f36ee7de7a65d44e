"""Every script in examples/ runs against the real gateway and exits 0, so none of them rots."""

from __future__ import annotations

import os
import subprocess
import uuid
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "examples").glob("*.py"))


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_the_example_runs(running_gateway, script):
    env = {**os.environ, "RELAY_URL": running_gateway.url, "RELAY_ADMIN_KEY": running_gateway.admin_key}
    done = subprocess.run([sys.executable, str(script)], env=env, cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, f"{script.name} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    assert done.stdout.strip(), f"{script.name} printed nothing"


def test_the_quickstart_tells_its_story(running_gateway):
    env = {**os.environ, "RELAY_URL": running_gateway.url, "RELAY_ADMIN_KEY": running_gateway.admin_key}
    out = subprocess.run([sys.executable, str(REPO / "examples" / "quickstart.py")], env=env, cwd=REPO,
                         capture_output=True, text=True, timeout=300, check=True).stdout.splitlines()
    print("\n".join(out))
    assert out[0] == "created"
    assert out[1].startswith("Asha said: We moved to Pune")
    assert out[2].startswith("conflict [")
    assert out[3] == "[('mumbai', 'crm-bot')]"


def test_the_readme_quickstart_runs(running_gateway, tmp_path):
    readme = (REPO / "README.md").read_text()
    code = readme.split("## Your own agents in five minutes", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    assert len(code.strip().splitlines()) <= 15, "README's quickstart stays within 15 lines of code"
    script = tmp_path / "readme_quickstart.py"
    tenant = f"readme-{uuid.uuid4().hex[:8]}"  # the README's tenant name, made unique for this run
    script.write_text(code.replace('"acme"', f'"{tenant}"'))
    env = {**os.environ, "RELAY_URL": running_gateway.url, "RELAY_ADMIN_KEY": running_gateway.admin_key}
    done = subprocess.run([sys.executable, str(script)], env=env, cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "object='pune'" in done.stdout and "asserted_by='planner'" in done.stdout, done.stdout


async def test_the_mcp_snippet_connects_and_lists_the_tools(running_gateway):
    import json

    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from relay_graph.tools import TOOLS

    server = json.loads((REPO / "examples" / "mcp" / "remote.json").read_text())["mcpServers"]["relay"]
    tenant = f"mcp-{uuid.uuid4().hex[:8]}"
    r = httpx2.post(f"{running_gateway.url}/v1/tenants", json={"tenant": tenant},
                    headers={"Authorization": f"Bearer {running_gateway.admin_key}"}, timeout=30)
    headers = {k: v.replace("${RELAY_API_KEY}", r.json()["api_key"]) for k, v in server["headers"].items()}
    url = server["url"].replace("http://127.0.0.1:8000", running_gateway.url)
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60)) as http:
        async with streamable_http_client(url, http_client=http) as (read, write, *_):
            async with ClientSession(read, write) as session:
                await session.initialize()
                assert {t.name for t in (await session.list_tools()).tools} == set(TOOLS)


def test_the_langgraph_agent_recalls_the_newest_memory_and_keeps_the_old(running_gateway):
    env = {**os.environ, "RELAY_URL": running_gateway.url, "RELAY_ADMIN_KEY": running_gateway.admin_key}
    out = subprocess.run([sys.executable, str(REPO / "examples" / "langgraph_agent.py")], env=env, cwd=REPO,
                         capture_output=True, text=True, timeout=300, check=True).stdout
    print(out)
    assert "recalled for 'Where do I live now?': home = 'We moved to Mumbai last month.'" in out
    assert "recalled for \"Is there any food I can't eat?\": diet = 'I am allergic to peanuts.'" in out
    history = [line for line in out.splitlines() if line.startswith("home was")]
    assert [line.split("'")[1] for line in history] == ["I live in Pune, near the river.", "We moved to Mumbai last month."]
    assert "namespaces: [('memories', 'asha')]" in out
