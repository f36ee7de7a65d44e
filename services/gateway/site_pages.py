"""Serving the built customer site (web/, built by `make install` into web/dist): its page at `/`
(the public demo tenant's site) and `/t/{tenant}/` (a tenant's own), its hashed assets under
`/assets/`. Everything comes from this process: the page loads nothing from anywhere else."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from relay_graph.runtime.errors import NotFound
from relay_graph.runtime.tenancy import validate_tenant

# The page is the same for every tenant (it reads its tenant from the path); it must never be
# cached past a rebuild, while the hashed assets may be cached for ever.
PAGE_HEADERS = {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff",
                "Content-Security-Policy": "default-src 'self'; connect-src 'self'; img-src 'self' data:; "
                "style-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
                "Referrer-Policy": "same-origin"}


class SiteNotBuilt(NotFound):
    code = "site_not_built"


def mount(app: FastAPI, site_dir: Path) -> None:
    index = site_dir / "index.html"

    def page() -> FileResponse:
        if not index.is_file():
            raise SiteNotBuilt(f"the customer site is not built ({index} is missing): run `make install`")
        return FileResponse(index, headers=PAGE_HEADERS)

    @app.get("/", include_in_schema=False)
    async def demo_site() -> FileResponse:
        return page()

    @app.get("/t/{tenant}/", include_in_schema=False)
    async def tenant_site(tenant: str) -> FileResponse:
        validate_tenant(tenant)
        return page()

    @app.get("/favicon.svg", include_in_schema=False)
    async def favicon() -> FileResponse:
        icon = site_dir / "favicon.svg"
        if not icon.is_file():
            raise NotFound("no icon")
        return FileResponse(icon)

    assets = site_dir / "assets"
    if assets.is_dir():
        app.mount("/assets", StaticFiles(directory=assets), name="site-assets")
