"""The built customer site served by the gateway: the page at / and /t/{tenant}/, its assets from
/assets/ (nothing from anywhere else), and a clear 404 when it was not built."""

from __future__ import annotations

import re

from services.gateway.settings import GatewaySettings

from .helpers import assert_error, client_for, make_app

DIST = GatewaySettings().site_dir


async def test_the_page_and_every_asset_it_names_come_from_the_gateway(client):
    assert (DIST / "index.html").is_file(), "web/dist is built by `make install` (make site)"
    for path in ("/", "/t/acme/"):
        r = await client.get(path)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html"), r.text
        assert "default-src 'self'" in r.headers["content-security-policy"]
    html = (await client.get("/")).text
    refs = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert refs and all(ref.startswith("/") and not ref.startswith("//") for ref in refs), refs
    code = ""
    for ref in refs:
        asset = await client.get(ref)
        assert asset.status_code == 200 and asset.content, ref
        if ref.endswith((".js", ".css")):
            code += asset.text
    # No address outside (React names its docs' URL in error texts and SVG its namespace: not fetched).
    outside = set(re.findall(r"""(?:url\(|import\(|from\s*|fetch\()["']?(https?://[^"')\s]+)""", code))
    assert not outside, outside
    assert_error(await client.get("/t/Not A Tenant!/"), 422, "invalid_tenant")


async def test_an_unbuilt_site_answers_a_clear_404(gateway_settings, memory, tmp_path):
    app = make_app(gateway_settings.model_copy(update={"site_dir": tmp_path / "nothing"}), memory)
    async with client_for(app) as c:
        body = assert_error(await c.get("/"), 404, "site_not_built")
        assert "make install" in body["error"]["message"]
        assert (await c.get("/healthz")).status_code == 200
