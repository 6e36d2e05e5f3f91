"""The built-in shop: FastAPI, server-rendered HTML, SQLite; one process serves many isolated sessions.

Product and order numbers in URLs have a fixed width (``/product/00042``, ``/orders/000000007``, order
numbers as Magento writes them), so that under WebArena's substring rule for ``url_match`` the reference
``/product/4`` can never be matched by ``/product/42``.

Every page of a session lives under ``/s/<token>/``, so a session's base URL is what WebArena calls the
``shopping`` site and task configs address it through ``__SHOPPING__``. The catalogue is one read-only
SQLite database shared by all sessions; a session's own state (cart, orders, account) is an in-memory
SQLite database copied from a template with SQLite's backup API on open and on reset (copy-on-reset).
The customer is fixed and always logged in: there is no sign-in page.

The session API (``/_sessions``) is the env's, not the pages': it answers only a request carrying the
shop's secret in the ``X-Agenthub-Shop-Secret`` header (random per shop, handed to it by whoever started
it, never to the browser), so a page the agent drives cannot open, reset or delete sessions, its own
included.

Every route is ``async`` and does short SQLite calls, so all database work runs on the event loop's one
thread: no connection is shared across threads.
"""

from __future__ import annotations

import hmac
import html
import json
import math
import secrets
import sqlite3
import urllib.parse
import weakref
from collections.abc import Iterable, Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from agenthub_env_webarena.shop.catalog import load_catalog, price, rating

PAGE_SIZE = 20
SECRET_HEADER = "X-Agenthub-Shop-Secret"
"""The header the session API requires; its value is the secret the shop was created with."""
SORTS = {
    "relevance": "id",
    "price_asc": "price_cents, id",
    "price_desc": "price_cents DESC, id",
    "name": "name, id",
}
SORT_LABELS = {
    "relevance": "Relevance",
    "price_asc": "Price: low to high",
    "price_desc": "Price: high to low",
    "name": "Name",
}
SHIPPING = {"Standard": 500, "Express": 1500}
CUSTOMER = {
    "name": "Emma Lopez",
    "email": "emma.lopez@example.com",
    "phone": "555-0142",
    "address": "101 S San Mateo Dr, San Mateo, CA 94010",
}
# Past orders of the fixed customer: (product id, options, qty, shipping, status). Task generation keeps
# these products out of its cart and order tasks so a seeded order never passes as the agent's.
SEEDED_ORDERS: list[tuple[int, dict[str, str], int, str, str]] = [
    (1, {}, 1, "Standard", "Complete"),
    (2, {}, 2, "Standard", "Complete"),
    (3, {}, 1, "Express", "Complete"),
    (4, {}, 1, "Standard", "Canceled"),
    (5, {}, 3, "Standard", "Processing"),
]
STATE_SCHEMA = """
CREATE TABLE cart (id INTEGER PRIMARY KEY, product_id INTEGER, options TEXT, qty INTEGER);
CREATE TABLE orders (id INTEGER PRIMARY KEY, name TEXT, address TEXT, shipping TEXT, status TEXT,
                     total_cents INTEGER);
CREATE TABLE order_items (order_id INTEGER, product_id INTEGER, name TEXT, options TEXT, qty INTEGER,
                          price_cents INTEGER);
CREATE TABLE account (key TEXT PRIMARY KEY, value TEXT);
"""


def e(value: object) -> str:
    return html.escape(str(value), quote=True)


def format_options(options: Mapping[str, str]) -> str:
    return "".join(f"<li>{e(k)}: {e(v)}</li>" for k, v in options.items())


def decode_options(text: str) -> dict[str, str]:
    return dict(urllib.parse.parse_qsl(text)) if text else {}


def _close_databases(
    catalog: sqlite3.Connection, template: sqlite3.Connection, sessions: dict[str, sqlite3.Connection]
) -> None:
    for connection in (catalog, template, *sessions.values()):
        connection.close()
    sessions.clear()


class Shop:
    """The shared catalogue, the state template and the open sessions' databases."""

    def __init__(self, catalog: Mapping[str, Any] | None = None) -> None:
        data = catalog if catalog is not None else load_catalog()
        self.categories: dict[str, str] = {c["slug"]: c["name"] for c in data["categories"]}
        self.catalog = sqlite3.connect(":memory:", check_same_thread=False)
        self.catalog.row_factory = sqlite3.Row
        self.catalog.executescript(
            """CREATE TABLE products (id INTEGER PRIMARY KEY, sku TEXT, name TEXT, category TEXT,
                   price_cents INTEGER, stock INTEGER, description TEXT, options TEXT, reviews INTEGER, rating TEXT);
               CREATE TABLE reviews (product_id INTEGER, n INTEGER, author TEXT, rating INTEGER, title TEXT, body TEXT);
               CREATE INDEX reviews_product ON reviews (product_id);"""
        )
        for p in data["products"]:
            self.catalog.execute(
                "INSERT INTO products VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    p["id"],
                    p["sku"],
                    p["name"],
                    p["category"],
                    p["price_cents"],
                    p["stock"],
                    p["description"],
                    json.dumps(p["options"]),
                    len(p["reviews"]),
                    rating(p),
                ),
            )
            self.catalog.executemany(
                "INSERT INTO reviews VALUES (?,?,?,?,?,?)",
                [(p["id"], n, r["author"], r["rating"], r["title"], r["body"]) for n, r in enumerate(p["reviews"])],
            )
        self.catalog.commit()
        self.template = sqlite3.connect(":memory:", check_same_thread=False)
        self.template.executescript(STATE_SCHEMA)
        self.template.executemany("INSERT INTO account VALUES (?, ?)", CUSTOMER.items())
        for pid, options, qty, shipping, status in SEEDED_ORDERS:
            product = self.product(pid)
            assert product is not None
            total = product["price_cents"] * qty + SHIPPING[shipping]
            cur = self.template.execute(
                "INSERT INTO orders (name, address, shipping, status, total_cents) VALUES (?,?,?,?,?)",
                (CUSTOMER["name"], CUSTOMER["address"], shipping, status, total),
            )
            self.template.execute(
                "INSERT INTO order_items VALUES (?,?,?,?,?,?)",
                (cur.lastrowid, pid, product["name"], urllib.parse.urlencode(options), qty, product["price_cents"]),
            )
        self.template.commit()
        self.sessions: dict[str, sqlite3.Connection] = {}
        # Closes every database when the shop is closed or collected (Python 3.13 warns of an unclosed one, and
        # an in-process shop, a test's or an app's without lifespan, has no moment to close them otherwise).
        self._finalizer = weakref.finalize(self, _close_databases, self.catalog, self.template, self.sessions)

    def close_all(self) -> None:
        """Close the catalogue, the template and every open session's database."""
        self._finalizer()

    # -- sessions -------------------------------------------------------------------------------
    def open(self) -> str:
        token = secrets.token_hex(16)  # 128 bits: a session's URL is its only key to its pages
        self.sessions[token] = self._fresh()
        return token

    def reset(self, token: str) -> None:
        old = self.sessions[token]
        self.sessions[token] = self._fresh()
        old.close()

    def close(self, token: str) -> None:
        self.sessions.pop(token).close()

    def _fresh(self) -> sqlite3.Connection:
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        self.template.backup(conn)  # copy-on-reset: the template's pages, a fraction of a millisecond
        conn.row_factory = sqlite3.Row
        return conn

    # -- catalogue ------------------------------------------------------------------------------
    def product(self, pid: int) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self.catalog.execute("SELECT * FROM products WHERE id = ?", (pid,)).fetchone()
        return row

    def listing(self, where: str, args: Iterable[Any], sort: str, page: int) -> tuple[list[sqlite3.Row], int]:
        args = list(args)
        total = int(self.catalog.execute(f"SELECT count(*) FROM products WHERE {where}", args).fetchone()[0])
        rows = self.catalog.execute(
            f"SELECT * FROM products WHERE {where} ORDER BY {SORTS[sort]} LIMIT ? OFFSET ?",
            [*args, PAGE_SIZE, (page - 1) * PAGE_SIZE],
        ).fetchall()
        return rows, total


def search_where(query: str) -> tuple[str, list[str]]:
    """Every word of the query in the product's name, any case (what the site's search means)."""
    words = query.split()
    if not words:
        return "0", []
    return " AND ".join("name LIKE ?" for _ in words), [f"%{w}%" for w in words]


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status)


def create_app(shop: Shop | None = None, secret: str | None = None) -> FastAPI:
    """The shop's app; its session API needs ``secret`` (a random one when None: read ``app.state.secret``)."""
    shop = shop or Shop()
    app = FastAPI(title="agenthub shop", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.shop = shop
    app.state.secret = secret or secrets.token_urlsafe(32)

    def authorized(request: Request) -> JSONResponse | None:
        given = request.headers.get(SECRET_HEADER, "")
        if hmac.compare_digest(given.encode(), app.state.secret.encode()):
            return None
        return _error(
            403,
            "forbidden",
            f"the session API needs the shop's secret in the {SECRET_HEADER} header; it is for the env that "
            "started the shop (start_shop), not for pages",
        )

    def page(token: str, title: str, body: str, status: int = 200) -> HTMLResponse:
        base = f"/s/{token}"
        cats = "".join(f'<li><a href="{base}/category/{s}">{e(n)}</a></li>' for s, n in shop.categories.items())
        count = shop.sessions[token].execute("SELECT coalesce(sum(qty), 0) FROM cart").fetchone()[0]
        doc = f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{e(title)} | One Stop Shop</title>
<style>body{{font-family:sans-serif;margin:0 1em}} .products li{{margin:.3em 0}} nav ul{{display:flex;gap:1em;
flex-wrap:wrap;list-style:none;padding:0}}</style></head><body>
<header><p><a href="{base}/">One Stop Shop</a></p>
<form role="search" action="{base}/search" method="get"><label for="search">Search products</label>
<input id="search" name="q" type="search"> <button type="submit">Search</button></form>
<nav aria-label="Account"><ul><li><a href="{base}/cart">My Cart ({count})</a></li>
<li><a href="{base}/orders">My Orders</a></li><li><a href="{base}/account">My Account</a></li></ul></nav>
<nav aria-label="Categories"><ul>{cats}</ul></nav></header>
<main><h1>{e(title)}</h1>{body}</main></body></html>"""
        return HTMLResponse(doc, status_code=status)

    def unknown(token: str) -> HTMLResponse:
        return HTMLResponse(
            "<!doctype html><title>Unknown session</title><h1>Unknown session</h1><p>This session is not "
            "open (closed, or the shop restarted): open one with POST /_sessions.</p>",
            status_code=404,
        )

    def product_list(token: str, rows: list[sqlite3.Row]) -> str:
        items = "".join(
            f'<li><a href="/s/{token}/product/{r["id"]:05d}">{e(r["name"])}</a> {price(r["price_cents"])}'
            f" (rating {r['rating']}, {r['reviews']} reviews)</li>"
            for r in rows
        )
        return f'<ol class="products">{items}</ol>'

    def pager(token: str, path: str, params: dict[str, str], page_no: int, total: int) -> str:
        pages = max(1, math.ceil(total / PAGE_SIZE))
        links = []
        for label, target in (("Previous page", page_no - 1), ("Next page", page_no + 1)):
            if 1 <= target <= pages:
                query = urllib.parse.urlencode({**params, "page": target})
                links.append(f'<a href="/s/{token}{path}?{query}">{label}</a>')
        return f'<nav aria-label="Pages"><p>Page {page_no} of {pages}</p>{" ".join(links)}</nav>'

    def sorter(token: str, path: str, params: dict[str, str], current: str) -> str:
        links = []
        for key, label in SORT_LABELS.items():
            query = urllib.parse.urlencode({**params, "sort": key})
            links.append(
                f"<li><strong>{label}</strong></li>"
                if key == current
                else f'<li><a href="/s/{token}{path}?{query}">Sort by {label}</a></li>'
            )
        return f'<nav aria-label="Sort"><ul>{"".join(links)}</ul></nav>'

    def listing_args(request: Request) -> tuple[str, int]:
        sort = request.query_params.get("sort", "relevance")
        if sort not in SORTS:
            sort = "relevance"
        try:
            page_no = max(1, int(request.query_params.get("page", "1")))
        except ValueError:
            page_no = 1
        return sort, page_no

    async def form(request: Request) -> dict[str, str]:
        # URL-encoded forms only (all this site sends): parsed here, so python-multipart is not needed.
        return dict(urllib.parse.parse_qsl((await request.body()).decode("utf-8"), keep_blank_values=True))

    # -- session management (for the env, not for the agent) ------------------------------------
    @app.get("/")
    async def root() -> HTMLResponse:
        return HTMLResponse(
            "<!doctype html><title>agenthub shop</title><h1>agenthub shop</h1><p>Each session lives under "
            "/s/&lt;token&gt;/; open one with POST /_sessions.</p>"
        )

    @app.get("/_health")
    async def health() -> dict[str, int]:
        return {
            "sessions": len(shop.sessions),
            "products": shop.catalog.execute("SELECT count(*) FROM products").fetchone()[0],
        }

    @app.post("/_sessions", response_model=None)
    async def open_session(request: Request) -> Response:
        refused = authorized(request)
        if refused is not None:
            return refused
        token = shop.open()
        return JSONResponse({"token": token, "base_url": f"{str(request.base_url).rstrip('/')}/s/{token}"})

    # A missing session's token is not echoed: error texts end up in logs.
    @app.post("/_sessions/{token}/reset", response_model=None)
    async def reset_session(token: str, request: Request) -> Response:
        refused = authorized(request)
        if refused is not None:
            return refused
        if token not in shop.sessions:
            return _error(404, "session_not_found", "no such open session; open one with POST /_sessions")
        shop.reset(token)
        return JSONResponse({"reset": True})

    @app.delete("/_sessions/{token}", response_model=None)
    async def close_session(token: str, request: Request) -> Response:
        refused = authorized(request)
        if refused is not None:
            return refused
        if token not in shop.sessions:
            return _error(404, "session_not_found", "no such open session; it was closed already or never opened")
        shop.close(token)
        return JSONResponse({"closed": True})

    # -- the shop -------------------------------------------------------------------------------
    @app.get("/s/{token}")
    @app.get("/s/{token}/")
    async def home(token: str) -> HTMLResponse:
        if token not in shop.sessions:
            return unknown(token)
        rows = shop.catalog.execute("SELECT * FROM products WHERE stock > 0 ORDER BY id LIMIT 10").fetchall()
        cats = "".join(
            f'<li><a href="/s/{token}/category/{s}">Shop {e(n)}</a></li>' for s, n in shop.categories.items()
        )
        body = f"<h2>Featured products</h2>{product_list(token, rows)}<h2>All categories</h2><ul>{cats}</ul>"
        return page(token, "Home", body)

    @app.get("/s/{token}/search")
    async def search(token: str, request: Request) -> HTMLResponse:
        if token not in shop.sessions:
            return unknown(token)
        query = request.query_params.get("q", "").strip()
        sort, page_no = listing_args(request)
        where, args = search_where(query)
        rows, total = shop.listing(where, args, sort, page_no)
        params = {"q": query}
        body = (
            f'<p role="status">{total} results for &quot;{e(query)}&quot;</p>{sorter(token, "/search", params, sort)}'
            f"{product_list(token, rows)}{pager(token, '/search', {**params, 'sort': sort}, page_no, total)}"
        )
        return page(token, f"Search results for '{query}'", body)

    @app.get("/s/{token}/category/{slug}")
    async def category(token: str, slug: str, request: Request) -> HTMLResponse:
        if token not in shop.sessions:
            return unknown(token)
        if slug not in shop.categories:
            links = ", ".join(shop.categories)
            return page(
                token, "Category not found", f"<p>No category {e(slug)}; the categories are {e(links)}.</p>", 404
            )
        sort, page_no = listing_args(request)
        rows, total = shop.listing("category = ?", [slug], sort, page_no)
        path = f"/category/{slug}"
        body = (
            f'<p role="status">{total} products</p>{sorter(token, path, {}, sort)}{product_list(token, rows)}'
            f"{pager(token, path, {'sort': sort}, page_no, total)}"
        )
        return page(token, shop.categories[slug], body)

    def product_page(token: str, pid: int, error: str = "") -> HTMLResponse:
        row = shop.product(pid)
        if row is None:
            return page(
                token, "Product not found", f"<p>No product {pid}; search the shop or browse a category.</p>", 404
            )
        options: dict[str, list[str]] = json.loads(row["options"])
        reviews = shop.catalog.execute("SELECT * FROM reviews WHERE product_id = ? ORDER BY n", (pid,)).fetchall()
        review_html = (
            "".join(
                f"<article><h3>{e(r['title'])}</h3><p>{r['rating']} out of 5 stars, by {e(r['author'])}</p>"
                f"<p>{e(r['body'])}</p></article>"
                for r in reviews
            )
            or "<p>No reviews yet.</p>"
        )
        fields = "".join(
            f'<p><label for="opt-{e(name.lower())}">{e(name)}</label> <select id="opt-{e(name.lower())}" '
            f'name="{e(name)}"><option value="">Choose a {e(name.lower())}</option>'
            + "".join(f'<option value="{e(v)}">{e(v)}</option>' for v in values)
            + "</select></p>"
            for name, values in options.items()
        )
        if row["stock"] > 0:
            buy = (
                f'<form method="post" action="/s/{token}/cart/add">'
                f'<input type="hidden" name="product_id" value="{pid}">'
                f'{fields}<p><label for="qty">Quantity</label> <input id="qty" name="qty" type="number" min="1" '
                f'max="99" placeholder="1"></p><button type="submit">Add to Cart</button></form>'
            )
            stock = f"In stock ({row['stock']} left)"
        else:
            buy, stock = "", "Out of stock"
        alert = f'<p role="alert">{e(error)}</p>' if error else ""
        cat = row["category"]
        body = (
            f'{alert}<p>Category: <a href="/s/{token}/category/{cat}">{e(shop.categories[cat])}</a></p>'
            f'<p>Price: <span class="price">{price(row["price_cents"])}</span></p><p>SKU: {row["sku"]}</p>'
            f"<p>Availability: {stock}</p><p>Rating: {row['rating']} ({row['reviews']} reviews)</p>"
            f"<p>{e(row['description'])}</p>{buy}<h2>Reviews ({row['reviews']})</h2>{review_html}"
        )
        return page(token, row["name"], body, 400 if error else 200)

    @app.get("/s/{token}/product/{pid}")
    async def product(token: str, pid: int) -> HTMLResponse:
        if token not in shop.sessions:
            return unknown(token)
        return product_page(token, pid)

    @app.post("/s/{token}/cart/add", response_model=None)
    async def cart_add(token: str, request: Request) -> Response:
        if token not in shop.sessions:
            return unknown(token)
        data = await form(request)
        try:
            pid = int(data.get("product_id", ""))
        except ValueError:
            return page(token, "Not added", "<p>The form named no product; add items from a product page.</p>", 400)
        row = shop.product(pid)
        if row is None or row["stock"] <= 0:
            return page(token, "Not added", "<p>That product is unknown or out of stock.</p>", 400)
        chosen: dict[str, str] = {}
        for name, values in json.loads(row["options"]).items():
            value = data.get(name, "")
            if value not in values:
                return product_page(
                    token, pid, f"Choose a {name.lower()} ({', '.join(values)}) before adding to the cart."
                )
            chosen[name] = value
        try:
            qty = int(data.get("qty", "1") or "1")
        except ValueError:
            qty = 0
        if not 1 <= qty <= 99:
            return product_page(token, pid, "Quantity must be a whole number from 1 to 99.")
        db = shop.sessions[token]
        encoded = urllib.parse.urlencode(chosen)
        same = db.execute("SELECT id FROM cart WHERE product_id = ? AND options = ?", (pid, encoded)).fetchone()
        if same:
            db.execute("UPDATE cart SET qty = min(99, qty + ?) WHERE id = ?", (qty, same["id"]))
        else:
            db.execute("INSERT INTO cart (product_id, options, qty) VALUES (?,?,?)", (pid, encoded, qty))
        db.commit()
        return RedirectResponse(f"/s/{token}/cart", status_code=303)

    @app.post("/s/{token}/cart/remove", response_model=None)
    async def cart_remove(token: str, request: Request) -> Response:
        if token not in shop.sessions:
            return unknown(token)
        data = await form(request)
        db = shop.sessions[token]
        db.execute("DELETE FROM cart WHERE id = ?", (data.get("item_id", ""),))
        db.commit()
        return RedirectResponse(f"/s/{token}/cart", status_code=303)

    def cart_rows(token: str) -> list[tuple[sqlite3.Row, sqlite3.Row, dict[str, str]]]:
        rows = []
        for item in shop.sessions[token].execute("SELECT * FROM cart ORDER BY id").fetchall():
            product = shop.product(item["product_id"])
            assert product is not None
            rows.append((item, product, decode_options(item["options"])))
        return rows

    @app.get("/s/{token}/cart")
    async def cart(token: str) -> HTMLResponse:
        if token not in shop.sessions:
            return unknown(token)
        rows = cart_rows(token)
        if not rows:
            return page(token, "Shopping Cart", '<section id="cart"><p>Your cart is empty.</p></section>')
        items = "".join(
            f'<li><a href="/s/{token}/product/{p["id"]:05d}">{e(p["name"])}</a><ul>{format_options(o)}'
            f"<li>Qty: {i['qty']}</li><li>Price: {price(p['price_cents'])}</li></ul>"
            f'<form method="post" action="/s/{token}/cart/remove"><input type="hidden" name="item_id" '
            f'value="{i["id"]}"><button type="submit">Remove {e(p["name"])}</button></form></li>'
            for i, p, o in rows
        )
        subtotal = sum(i["qty"] * p["price_cents"] for i, p, _ in rows)
        body = (
            f'<section id="cart"><ul>{items}</ul><p>Subtotal: {price(subtotal)}</p></section>'
            f'<p><a href="/s/{token}/checkout">Proceed to Checkout</a></p>'
        )
        return page(token, "Shopping Cart", body)

    def checkout_page(token: str, error: str = "") -> HTMLResponse:
        rows = cart_rows(token)
        if not rows:
            return page(
                token,
                "Checkout",
                "<p>Your cart is empty: add a product before checking out.</p>",
                400 if error else 200,
            )
        account = dict(shop.sessions[token].execute("SELECT key, value FROM account").fetchall())
        shipping = "".join(f'<option value="{k}">{k} shipping ({price(v)})</option>' for k, v in SHIPPING.items())
        summary = "".join(f"<li>{e(p['name'])} x {i['qty']}</li>" for i, p, _ in rows)
        alert = f'<p role="alert">{e(error)}</p>' if error else ""
        body = (
            f'{alert}<ul>{summary}</ul><form method="post" action="/s/{token}/checkout">'
            f'<p><label for="ship-name">Full name</label> '
            f'<input id="ship-name" name="name" value="{e(account["name"])}"></p>'
            f'<p><label for="ship-address">Shipping address</label> <input id="ship-address" name="address" size="50" '
            f'value="{e(account["address"])}"></p><p><label for="shipping">Shipping method</label> '
            f'<select id="shipping" name="shipping">{shipping}</select></p>'
            '<button type="submit">Place Order</button></form>'
        )
        return page(token, "Checkout", body, 400 if error else 200)

    @app.get("/s/{token}/checkout")
    async def checkout(token: str) -> HTMLResponse:
        if token not in shop.sessions:
            return unknown(token)
        return checkout_page(token)

    @app.post("/s/{token}/checkout", response_model=None)
    async def place_order(token: str, request: Request) -> Response:
        if token not in shop.sessions:
            return unknown(token)
        data = await form(request)
        rows = cart_rows(token)
        if not rows:
            return checkout_page(token, "Your cart is empty.")
        shipping = data.get("shipping", "Standard")
        if shipping not in SHIPPING:
            return checkout_page(token, f"Choose a shipping method: {', '.join(SHIPPING)}.")
        name, address = data.get("name", "").strip(), data.get("address", "").strip()
        if not name or not address:
            return checkout_page(token, "Fill in the full name and the shipping address.")
        db = shop.sessions[token]
        total = sum(i["qty"] * p["price_cents"] for i, p, _ in rows) + SHIPPING[shipping]
        cur = db.execute(
            "INSERT INTO orders (name, address, shipping, status, total_cents) VALUES (?,?,?,?,?)",
            (name, address, shipping, "Pending", total),
        )
        db.executemany(
            "INSERT INTO order_items VALUES (?,?,?,?,?,?)",
            [(cur.lastrowid, p["id"], p["name"], i["options"], i["qty"], p["price_cents"]) for i, p, _ in rows],
        )
        db.execute("DELETE FROM cart")
        db.commit()
        return RedirectResponse(f"/s/{token}/orders/{cur.lastrowid:09d}", status_code=303)

    @app.get("/s/{token}/orders")
    async def orders(token: str) -> HTMLResponse:
        if token not in shop.sessions:
            return unknown(token)
        rows = shop.sessions[token].execute("SELECT * FROM orders ORDER BY id DESC").fetchall()
        items = "".join(
            f'<tr><td><a href="/s/{token}/orders/{o["id"]:09d}">Order #{o["id"]:09d}</a></td><td>{e(o["status"])}</td>'
            f"<td>{price(o['total_cents'])}</td></tr>"
            for o in rows
        )
        head = "<tr><th>Order</th><th>Status</th><th>Total</th></tr>"
        body = f"<table><caption>Order history</caption>{head}{items}</table>"
        return page(token, "My Orders", body)

    @app.get("/s/{token}/orders/{oid}")
    async def order(token: str, oid: int) -> HTMLResponse:
        if token not in shop.sessions:
            return unknown(token)
        db = shop.sessions[token]
        row = db.execute("SELECT * FROM orders WHERE id = ?", (oid,)).fetchone()
        if row is None:
            return page(token, "Order not found", f"<p>No order #{oid:09d}; see My Orders for your orders.</p>", 404)
        items = "".join(
            f'<li>Product: <a href="/s/{token}/product/{i["product_id"]:05d}">{e(i["name"])}</a><ul>'
            f"{format_options(decode_options(i['options']))}<li>Qty: {i['qty']}</li>"
            f"<li>Price: {price(i['price_cents'])}</li></ul></li>"
            for i in db.execute("SELECT * FROM order_items WHERE order_id = ?", (oid,)).fetchall()
        )
        body = (
            f'<section id="order-details"><p>Status: {e(row["status"])}</p><p>Shipping: {e(row["shipping"])}</p>'
            f"<p>Ship to: {e(row['name'])}, {e(row['address'])}</p><ul>{items}</ul>"
            f"<p>Total: {price(row['total_cents'])}</p></section>"
        )
        return page(token, f"Order #{oid:09d}", body)

    @app.get("/s/{token}/account")
    async def account(token: str, request: Request) -> HTMLResponse:
        if token not in shop.sessions:
            return unknown(token)
        info = dict(shop.sessions[token].execute("SELECT key, value FROM account").fetchall())
        saved = '<p role="status">Your account was saved.</p>' if request.query_params.get("saved") else ""
        # Empty fields (the current value as placeholder), blank ones kept: WebArena's `type` appends to what
        # a field holds, so a prefilled field could not be changed by typing. Quantity is blank (1) likewise.
        fields = "".join(
            f'<p><label for="acct-{k}">{k.capitalize()}</label> <input id="acct-{k}" name="{k}" size="50" '
            f'placeholder="{e(info[k])}"></p>'
            for k in CUSTOMER
        )
        body = (
            f'{saved}<section id="account-info"><h2>Contact information</h2>'
            + "".join(f"<p>{k.capitalize()}: {e(info[k])}</p>" for k in CUSTOMER)
            + f'</section><h2>Edit account</h2><form method="post" action="/s/{token}/account">{fields}'
            '<button type="submit">Save</button></form>'
        )
        return page(token, "My Account", body)

    @app.post("/s/{token}/account", response_model=None)
    async def save_account(token: str, request: Request) -> Response:
        if token not in shop.sessions:
            return unknown(token)
        data = await form(request)
        db = shop.sessions[token]
        for key in CUSTOMER:
            value = data.get(key, "").strip()
            if value:
                db.execute("UPDATE account SET value = ? WHERE key = ?", (value, key))
        db.commit()
        return RedirectResponse(f"/s/{token}/account?saved=1", status_code=303)

    # -- for program_html helpers (WebArena's shopping_get_latest_order_url reads the shop's API too) --
    @app.get("/s/{token}/api/latest-order", response_model=None)
    async def latest_order(token: str, request: Request) -> Response:
        if token not in shop.sessions:
            return unknown(token)
        row = shop.sessions[token].execute("SELECT max(id) FROM orders").fetchone()
        return JSONResponse({"url": f"{str(request.base_url).rstrip('/')}/s/{token}/orders/{row[0]:09d}"})

    @app.get("/s/{token}/api/cart", response_model=None)
    async def cart_api(token: str) -> Response:
        if token not in shop.sessions:
            return unknown(token)
        return JSONResponse(
            [{"product_id": p["id"], "name": p["name"], "options": o, "qty": i["qty"]} for i, p, o in cart_rows(token)]
        )

    return app
