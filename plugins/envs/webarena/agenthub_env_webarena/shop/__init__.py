"""The built-in shop site: a small real web shop with a generated catalogue, many isolated sessions per process."""

from __future__ import annotations

from agenthub_env_webarena.shop.server import (
    ShopError,
    close_session_site,
    new_session_site,
    reset_session_site,
    shop_helpers,
    start_shop,
)

__all__ = ["ShopError", "close_session_site", "new_session_site", "reset_session_site", "shop_helpers", "start_shop"]
