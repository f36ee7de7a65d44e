"""The staff console's page at /console (web/console.html, built with the customer site into
web/dist; its assets are the site's /assets/). The page holds no data: it signs in with a key
typed into it and reads the /v1/console/... and /v1/tenants/... routes with it."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse

from ..site_pages import PAGE_HEADERS, SiteNotBuilt

router = APIRouter(include_in_schema=False)


@router.get("/console")
async def console_page(request: Request) -> FileResponse:
    page = request.app.state.deps.settings.site_dir / "console.html"
    if not page.is_file():
        raise SiteNotBuilt(f"the console is not built ({page} is missing): run `make install`")
    return FileResponse(page, headers=PAGE_HEADERS)
