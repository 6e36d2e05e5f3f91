"""The generated task set over the built-in shop, in WebArena's config format.

Every task is what WebArena's ``config_files/*.json`` holds (``__SHOPPING__`` placeholders, ``eval`` with
``string_match`` / ``url_match`` / ``program_html``) plus an ``oracle`` block, an extra key that WebArena's
harness ignores, telling the oracle agent what to do:

- ``{"kind": "answer", "path": P, "read": R}``: open ``__SHOPPING__`` + P, read R off the page (``price``,
  ``reviews``, ``rating``, ``in_stock``, ``first_listed``, ``result_count``, ``order_status``,
  ``order_total``), then ``stop`` with it (the block names what to read, never the answer);
- ``{"kind": "navigate", "path": P}``: end on ``__SHOPPING__`` + P;
- ``{"kind": "add_to_cart", "product_id": N, "path": P, "options": {...}, "qty": Q}``: on the product page
  P choose the options, set the quantity, press Add to Cart;
- ``{"kind": "place_order", ... as add_to_cart, "shipping": S}``: then checkout with shipping S, Place Order;
- ``{"kind": "update_account", "path": "/account", "fields": {label: value}}``: fill the fields, Save.

The same seed gives the same files, byte for byte.
"""

from __future__ import annotations

import json
import random
import urllib.parse
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agenthub_env_webarena.shop.app import CUSTOMER, SEEDED_ORDERS, SHIPPING
from agenthub_env_webarena.shop.catalog import DATA_DIR, SEED, price, rating

TASKS_DIR = DATA_DIR / "tasks"
SPLITS = ("train", "test")
TEST_EVERY = 5  # every fifth task (after a seeded shuffle) is a test task: a 80/20 split
SHOP = "__SHOPPING__"


def _config(
    intent: str,
    template: str,
    template_id: int,
    values: dict[str, Any],
    evaluation: dict[str, Any],
    oracle: dict[str, Any],
) -> dict[str, Any]:
    spec = {"eval_types": [], "reference_answers": None, "reference_url": "", "program_html": [], **evaluation}
    return {
        "sites": ["shopping"],
        "task_id": -1,
        "require_login": True,
        "storage_state": None,
        "start_url": SHOP,
        "geolocation": None,
        "intent_template": template,
        "instantiation_dict": values,
        "intent": intent,
        "require_reset": oracle["kind"] not in ("answer", "navigate"),
        "eval": spec,
        "intent_template_id": template_id,
        "oracle": oracle,
    }


def _answer(
    template: str, tid: int, values: dict[str, Any], answers: dict[str, Any], path: str, answer: str, read: str
) -> dict[str, Any]:
    return _config(
        template.format(**values),
        template,
        tid,
        values,
        {"eval_types": ["string_match"], "reference_answers": answers, "reference_answer_raw_annotation": answer},
        {"kind": "answer", "path": path, "read": read},
    )


def _navigate(template: str, tid: int, values: dict[str, Any], path: str) -> dict[str, Any]:
    return _config(
        template.format(**values),
        template,
        tid,
        values,
        {"eval_types": ["url_match"], "reference_url": SHOP + path, "url_note": "GOLD in PRED"},
        {"kind": "navigate", "path": path},
    )


@dataclass(frozen=True)
class _Shop:
    """What the task families draw from: the catalogue, read once, and the one RNG they share in turn."""

    rng: random.Random
    products: list[dict[str, Any]]
    categories: dict[str, str]  # slug -> name
    by_category: dict[str, list[dict[str, Any]]]
    in_stock: list[dict[str, Any]]  # buyable, and in no seeded order (whose totals the answers quote)
    with_options: list[dict[str, Any]]
    queries: list[str]  # two-word searches: the first and third word of a product name

    @classmethod
    def of(cls, catalog: dict[str, Any], seed: int) -> _Shop:
        products = catalog["products"]
        seeded = {pid for pid, *_ in SEEDED_ORDERS}
        in_stock = [p for p in products if p["stock"] > 0 and p["id"] not in seeded]
        by_category: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for p in products:
            by_category[p["category"]].append(p)
        return cls(
            rng=random.Random(seed),
            products=products,
            categories={c["slug"]: c["name"] for c in catalog["categories"]},
            by_category=by_category,
            in_stock=in_stock,
            with_options=[p for p in in_stock if p["options"]],
            queries=sorted({" ".join(p["name"].split(" ")[i] for i in (0, 2)) for p in products}),
        )

    def sample(
        self, pool: list[dict[str, Any]], n: int, ok: Callable[[dict[str, Any]], bool] = lambda p: True
    ) -> list[Any]:
        return self.rng.sample([p for p in pool if ok(p)], n)

    def search_results(self, query: str) -> list[dict[str, Any]]:
        words = query.lower().split()
        return [p for p in self.products if all(w in p["name"].lower() for w in words)]

    def choose(self, p: dict[str, Any]) -> dict[str, str]:
        """One value of each of the product's options."""
        return {name: self.rng.choice(values) for name, values in p["options"].items()}


def _page(p: dict[str, Any]) -> str:
    return f"/product/{p['id']:05d}"


def _search(query: str, **extra: str) -> str:
    return "/search?" + urllib.parse.urlencode({"q": query, **extra})


# -- information seeking (string_match) ----------------------------------------------------------------


def _price_questions(shop: _Shop) -> list[dict[str, Any]]:
    return [
        _answer(
            "What is the price of the {product}?",
            1,
            {"product": p["name"]},
            {"must_include": [price(p["price_cents"])[1:]]},
            _page(p),
            price(p["price_cents"]),
            "price",
        )
        for p in shop.sample(shop.products, 30)
    ]


def _review_count_questions(shop: _Shop) -> list[dict[str, Any]]:
    tasks = []
    for p in shop.sample(shop.products, 30):
        n = str(len(p["reviews"]))
        tasks.append(
            _answer(
                "How many reviews does the {product} have?",
                2,
                {"product": p["name"]},
                {"must_include": [n]},
                _page(p),
                n,
                "reviews",
            )
        )
    return tasks


def _rating_questions(shop: _Shop) -> list[dict[str, Any]]:
    return [
        _answer(
            "What is the average star rating of the {product}?",
            3,
            {"product": p["name"]},
            {"must_include": [rating(p)]},
            _page(p),
            rating(p),
            "rating",
        )
        for p in shop.sample(shop.products, 30, lambda p: bool(p["reviews"]))
    ]


def _stock_questions(shop: _Shop) -> list[dict[str, Any]]:
    tasks = []
    for p in shop.sample(shop.products, 30):
        yes = "Yes" if p["stock"] > 0 else "No"
        tasks.append(
            _answer(
                "Is the {product} in stock? Answer Yes or No.",
                4,
                {"product": p["name"]},
                {"exact_match": yes},
                _page(p),
                yes,
                "in_stock",
            )
        )
    return tasks


def _category_extreme_questions(shop: _Shop) -> list[dict[str, Any]]:
    """The cheapest and the dearest product of each category, where only one product holds that price."""
    tasks = []
    for slug, name in shop.categories.items():
        for sort, word, pick in (("price_asc", "cheapest", min), ("price_desc", "most expensive", max)):
            best = pick(p["price_cents"] for p in shop.by_category[slug])
            winners = [p for p in shop.by_category[slug] if p["price_cents"] == best]
            if len(winners) == 1:
                tasks.append(
                    _answer(
                        "What is the {which} product in the {category} category?",
                        5,
                        {"which": word, "category": name},
                        {"must_include": [winners[0]["name"]]},
                        f"/category/{slug}?sort={sort}",
                        winners[0]["name"],
                        "first_listed",
                    )
                )
    return tasks


def _search_count_questions(shop: _Shop) -> list[dict[str, Any]]:
    tasks = []
    for query in shop.rng.sample(shop.queries, 30):
        n = str(len(shop.search_results(query)))
        tasks.append(
            _answer(
                "How many products does a search for '{query}' find?",
                6,
                {"query": query},
                {"must_include": [n]},
                _search(query),
                n,
                "result_count",
            )
        )
    return tasks


def _search_cheapest_questions(shop: _Shop) -> list[dict[str, Any]]:
    """30 searches of two results or more whose cheapest result is the only one at its price."""
    tasks: list[dict[str, Any]] = []
    for query in shop.rng.sample(shop.queries, len(shop.queries)):
        results = shop.search_results(query)
        if len(results) < 2:
            continue
        best = min(p["price_cents"] for p in results)
        winners = [p for p in results if p["price_cents"] == best]
        if len(winners) == 1:
            tasks.append(
                _answer(
                    "What is the cheapest product a search for '{query}' finds?",
                    7,
                    {"query": query},
                    {"must_include": [winners[0]["name"]]},
                    _search(query, sort="price_asc"),
                    winners[0]["name"],
                    "first_listed",
                )
            )
            if len(tasks) == 30:
                break
    return tasks


def _order_questions(shop: _Shop) -> list[dict[str, Any]]:
    """The status and the total of each seeded order."""
    tasks = []
    for oid, (pid, _options, qty, shipping, status) in enumerate(SEEDED_ORDERS, start=1):
        total = price(shop.products[pid - 1]["price_cents"] * qty + SHIPPING[shipping])
        tasks.append(
            _answer(
                "What is the status of my order #{order}?",
                8,
                {"order": f"{oid:09d}"},
                {"must_include": [status]},
                f"/orders/{oid:09d}",
                status,
                "order_status",
            )
        )
        tasks.append(
            _answer(
                "How much did I pay in total for order #{order}?",
                9,
                {"order": f"{oid:09d}"},
                {"must_include": [total[1:]]},
                f"/orders/{oid:09d}",
                total,
                "order_total",
            )
        )
    return tasks


# -- navigation (url_match) ----------------------------------------------------------------------------


def _product_pages(shop: _Shop) -> list[dict[str, Any]]:
    return [
        _navigate("Go to the product page of the {product}.", 10, {"product": p["name"]}, _page(p))
        for p in shop.sample(shop.products, 30)
    ]


def _category_pages(shop: _Shop) -> list[dict[str, Any]]:
    return [
        _navigate("Show me the products in the {category} category.", 11, {"category": name}, f"/category/{slug}")
        for slug, name in shop.categories.items()
    ]


def _search_pages(shop: _Shop) -> list[dict[str, Any]]:
    return [
        _navigate("Search the shop for '{query}'.", 12, {"query": query}, _search(query))
        for query in shop.rng.sample(shop.queries, 25)
    ]


def _sorted_category_pages(shop: _Shop) -> list[dict[str, Any]]:
    sorts = {"price_asc": "price, lowest first", "price_desc": "price, highest first", "name": "name"}
    return [
        _navigate(
            "List the {category} category sorted by {order}.",
            13,
            {"category": shop.categories[slug], "order": sorts[sort]},
            f"/category/{slug}?sort={sort}",
        )
        for slug, sort in shop.rng.sample([(c, s) for c in shop.categories for s in sorts], 24)
    ]


def _order_pages(shop: _Shop) -> list[dict[str, Any]]:
    return [
        _navigate("Open the details of my order #{order}.", 14, {"order": f"{oid:09d}"}, f"/orders/{oid:09d}")
        for oid in range(1, len(SEEDED_ORDERS) + 1)
    ]


# -- state changes (program_html) ----------------------------------------------------------------------

_CART_CHECK = "document.querySelector('#cart').outerText"


def _phrase(options: dict[str, str]) -> str:
    return " and ".join(f"{k.lower()} {v}" for k, v in options.items())


def _must(p: dict[str, Any], options: dict[str, str], qty: int, *extra: str) -> list[str]:
    return [p["name"], *(f"{k}: {v}" for k, v in options.items()), f"Qty: {qty}", *extra]


def _check(url: str, locator: str, must_include: list[str]) -> dict[str, Any]:
    """A ``program_html`` evaluation with one check."""
    return {
        "eval_types": ["program_html"],
        "program_html": [{"url": url, "locator": locator, "required_contents": {"must_include": must_include}}],
    }


def _cart(kind: str, p: dict[str, Any], options: dict[str, str], qty: int, **extra: Any) -> dict[str, Any]:
    """The oracle block of a task that adds ``p`` to the cart (and, for ``place_order``, checks out)."""
    return {"kind": kind, "product_id": p["id"], "path": _page(p), "options": options, "qty": qty, **extra}


def _add_to_cart_tasks(shop: _Shop) -> list[dict[str, Any]]:
    tasks = []
    for p in shop.sample(shop.with_options, 40):
        options = shop.choose(p)
        tasks.append(
            _config(
                f"Add the {p['name']} in {_phrase(options)} to my cart.",
                "Add the {product} in {options} to my cart.",
                15,
                {"product": p["name"], "options": _phrase(options)},
                _check(f"{SHOP}/cart", _CART_CHECK, _must(p, options, 1)),
                _cart("add_to_cart", p, options, 1),
            )
        )
    return tasks


def _add_quantity_tasks(shop: _Shop) -> list[dict[str, Any]]:
    tasks = []
    for p in shop.sample(shop.in_stock, 20, lambda p: p["stock"] >= 5):
        options, qty = shop.choose(p), shop.rng.randint(2, 5)
        which = f" in {_phrase(options)}" if options else ""
        tasks.append(
            _config(
                f"Put {qty} of the {p['name']}{which} in my cart.",
                "Put {qty} of the {product}{options} in my cart.",
                16,
                {"qty": qty, "product": p["name"], "options": which},
                _check(f"{SHOP}/cart", _CART_CHECK, _must(p, options, qty)),
                _cart("add_to_cart", p, options, qty),
            )
        )
    return tasks


def _place_order_tasks(shop: _Shop) -> list[dict[str, Any]]:
    tasks = []
    for p in shop.sample(shop.in_stock, 40):
        options, shipping = shop.choose(p), shop.rng.choice(list(SHIPPING))
        which = f" in {_phrase(options)}" if options else ""
        tasks.append(
            _config(
                f"Buy the {p['name']}{which} with {shipping.lower()} shipping.",
                "Buy the {product}{options} with {shipping} shipping.",
                17,
                {"product": p["name"], "options": which, "shipping": shipping.lower()},
                _check(
                    "func:shopping_get_latest_order_url()",
                    "document.querySelector('#order-details').outerText",
                    _must(p, options, 1, f"Shipping: {shipping}", "Status: Pending"),
                ),
                _cart("place_order", p, options, 1, shipping=shipping),
            )
        )
    return tasks


_STREETS = ["Oak St", "Maple Ave", "Pine Rd", "Cedar Ln", "Elm Dr", "Birch Way"]
_CITIES = ["Springfield, IL 62701", "Portland, OR 97201", "Austin, TX 73301", "Madison, WI 53703"]


def _update_account_tasks(shop: _Shop) -> list[dict[str, Any]]:
    rng, tasks = shop.rng, []
    for _ in range(15):
        field = rng.choice(["address", "phone"])
        value = (
            f"{rng.randint(10, 9999)} {rng.choice(_STREETS)}, {rng.choice(_CITIES)}"
            if field == "address"
            else f"555-{rng.randint(1000, 9999)}"
        )
        assert value != CUSTOMER[field]
        tasks.append(
            _config(
                f"Change the {field} on my account to {value}.",
                "Change the {field} on my account to {value}.",
                18,
                {"field": field, "value": value},
                _check(
                    f"{SHOP}/account",
                    "document.querySelector('#account-info').outerText",
                    [f"{field.capitalize()}: {value}"],
                ),
                {"kind": "update_account", "path": "/account", "fields": {field.capitalize(): value}},
            )
        )
    return tasks


# In this order: the families draw from one RNG in turn, so the order is part of the generated set.
_FAMILIES: tuple[Callable[[_Shop], list[dict[str, Any]]], ...] = (
    _price_questions,
    _review_count_questions,
    _rating_questions,
    _stock_questions,
    _category_extreme_questions,
    _search_count_questions,
    _search_cheapest_questions,
    _order_questions,
    _product_pages,
    _category_pages,
    _search_pages,
    _sorted_category_pages,
    _order_pages,
    _add_to_cart_tasks,
    _add_quantity_tasks,
    _place_order_tasks,
    _update_account_tasks,
)


def generate_tasks(catalog: dict[str, Any], seed: int = SEED) -> dict[str, list[dict[str, Any]]]:
    """The task configs per split, task ids from 0, generated from the catalogue and the seed."""
    shop = _Shop.of(catalog, seed)
    tasks = [task for family in _FAMILIES for task in family(shop)]
    return _split(tasks, shop.rng)


def _split(tasks: list[dict[str, Any]], rng: random.Random) -> dict[str, list[dict[str, Any]]]:
    """Shuffled, numbered from 0, and every ``TEST_EVERY``-th task put in the test split."""
    order = list(range(len(tasks)))
    rng.shuffle(order)
    splits: dict[str, list[dict[str, Any]]] = {"train": [], "test": []}
    for task_id, index in enumerate(order):
        task = {**tasks[index], "task_id": task_id}
        splits["test" if task_id % TEST_EVERY == TEST_EVERY - 1 else "train"].append(task)
    return splits


def write_tasks(splits: dict[str, list[dict[str, Any]]], directory: Path = TASKS_DIR) -> None:
    """One file per task, ``DIR/<split>/<task_id>.json``, as WebArena's ``config_files`` are."""
    for split, tasks in splits.items():
        folder = directory / split
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*.json"):
            old.unlink()
        for task in tasks:
            (folder / f"{task['task_id']}.json").write_text(json.dumps(task, indent=2) + "\n", encoding="utf-8")


def tasks_dir(split: str) -> Path:
    """The folder of one split's shipped configs, for ``env_kwargs.tasks`` or ``task_config.load_tasks``."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; the built-in task set has {', '.join(SPLITS)}")
    return TASKS_DIR / split
