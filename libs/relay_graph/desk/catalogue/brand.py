"""The fictional provider whose desk Relay runs. Every place that names or styles the company
reads these constants; nothing else spells the brand.

Lanternfish: the deep-sea fish that carries its own light, like a fibre carries ours. The name is
fictional; the domain uses the reserved `.example` TLD so nothing in a demo can reach a real site."""

from __future__ import annotations

BRAND_NAME = "Lanternfish"
PRODUCT_LINE = "Fiber"  # plan names read "Fiber 100", "Fiber 300", "Fiber 1000"
DOMAIN = "lanternfish.example"
SUPPORT_EMAIL = f"help@{DOMAIN}"
STATUS_PAGE = f"https://status.{DOMAIN}"
APP_NAME = f"{BRAND_NAME} app"
OWN_ROUTER_MAKER = BRAND_NAME  # the maker name on the routers we supply

__all__ = [
    "APP_NAME",
    "BRAND_NAME",
    "DOMAIN",
    "OWN_ROUTER_MAKER",
    "PRODUCT_LINE",
    "STATUS_PAGE",
    "SUPPORT_EMAIL",
]
