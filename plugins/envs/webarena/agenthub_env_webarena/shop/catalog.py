"""The built-in shop's catalogue, generated deterministically from a seed.

Products are names built from word lists (brand, adjective, noun) so that every name is unique and
searchable by its words; prices, stock, options and reviews come from ``random.Random(seed)``, never
from the clock or the platform, so the same seed gives byte-identical JSON everywhere.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

SEED = 18
PRODUCTS = 3000
DATA_DIR = Path(__file__).resolve().parent.parent / "data"
CATALOG_FILE = DATA_DIR / "catalog.json"

SIZES = ["XS", "S", "M", "L", "XL"]
SHOE_SIZES = ["6", "7", "8", "9", "10", "11", "12"]
COLORS = ["Black", "White", "Red", "Blue", "Green", "Grey", "Navy", "Yellow"]

# (name, slug, nouns, option kinds, price range in dollars)
CATEGORIES: list[tuple[str, str, list[str], list[str], tuple[int, int]]] = [
    (
        "Clothing",
        "clothing",
        ["T-Shirt", "Hoodie", "Jacket", "Sweater", "Polo Shirt", "Cardigan"],
        ["size", "color"],
        (9, 120),
    ),
    (
        "Shoes",
        "shoes",
        ["Running Shoe", "Sneaker", "Hiking Boot", "Sandal", "Loafer"],
        ["shoe_size", "color"],
        (19, 180),
    ),
    (
        "Electronics",
        "electronics",
        ["Headphones", "Bluetooth Speaker", "Power Bank", "USB Hub", "Webcam", "Keyboard"],
        ["color"],
        (12, 400),
    ),
    (
        "Home & Kitchen",
        "home-kitchen",
        ["Coffee Maker", "Blender", "Kettle", "Toaster", "Knife Set", "Frying Pan"],
        ["color"],
        (8, 250),
    ),
    ("Books", "books", ["Cookbook", "Travel Guide", "Novel", "Field Guide", "Workbook"], [], (5, 60)),
    (
        "Sports & Outdoors",
        "sports-outdoors",
        ["Yoga Mat", "Water Bottle", "Tent", "Backpack", "Dumbbell Set"],
        ["color"],
        (7, 300),
    ),
    ("Toys & Games", "toys-games", ["Puzzle", "Board Game", "Building Set", "Plush Toy", "Kite"], [], (5, 90)),
    ("Beauty", "beauty", ["Face Cream", "Shampoo", "Lip Balm", "Hand Lotion", "Hair Brush"], [], (3, 70)),
    (
        "Office Supplies",
        "office-supplies",
        ["Notebook", "Desk Lamp", "Pen Set", "Stapler", "Desk Organizer"],
        ["color"],
        (2, 110),
    ),
    (
        "Garden",
        "garden",
        ["Garden Hose", "Plant Pot", "Pruning Shears", "Watering Can", "Bird Feeder"],
        ["color"],
        (4, 140),
    ),
    ("Pet Supplies", "pet-supplies", ["Dog Leash", "Cat Tree", "Pet Bed", "Chew Toy", "Food Bowl"], ["size"], (4, 160)),
    ("Jewelry", "jewelry", ["Necklace", "Bracelet", "Ring", "Earrings", "Watch"], [], (15, 500)),
]
BRANDS = [
    "Acme",
    "Borealis",
    "Cobalt",
    "Driftwood",
    "Ember",
    "Fjord",
    "Granite",
    "Harbor",
    "Ironleaf",
    "Juniper",
    "Kestrel",
    "Lumen",
    "Meridian",
    "Northwind",
    "Orchard",
    "Pinecrest",
    "Quartz",
    "Redwood",
    "Summit",
    "Tidewater",
    "Umber",
    "Vantage",
    "Willow",
    "Yarrow",
    "Zephyr",
]
ADJECTIVES = [
    "Classic",
    "Compact",
    "Deluxe",
    "Essential",
    "Everyday",
    "Lightweight",
    "Premium",
    "Rugged",
    "Sleek",
    "Vintage",
    "Modern",
    "Organic",
    "Portable",
    "Pro",
    "Soft",
]
FIRST_NAMES = [
    "Alex",
    "Bea",
    "Carlos",
    "Dana",
    "Eli",
    "Fatima",
    "Gus",
    "Hana",
    "Ivan",
    "Jo",
    "Kim",
    "Luis",
    "Mei",
    "Nora",
]
LAST_INITIALS = "ABCDEFGHJKLMNPRSTW"
REVIEW_TITLES = {
    5: ["Love it", "Excellent value", "Exactly as described", "Would buy again"],
    4: ["Very good", "Solid choice", "Happy with it", "Good quality"],
    3: ["It is okay", "Average", "Does the job", "Mixed feelings"],
    2: ["Disappointing", "Not great", "Expected more"],
    1: ["Broke quickly", "Do not buy", "Poor quality"],
}
REVIEW_BODIES = {
    5: "The {noun} works perfectly and arrived fast.",
    4: "Nice {noun}, a few small flaws but worth the price.",
    3: "The {noun} is fine for the price, nothing special.",
    2: "The {noun} looked cheaper than in the pictures.",
    1: "My {noun} stopped working after a week.",
}


def generate_catalog(seed: int = SEED, products: int = PRODUCTS) -> dict[str, Any]:
    """The whole catalogue: categories and products (with options and reviews), as plain JSON data."""
    rng = random.Random(seed)
    names = [
        (cat, f"{brand} {adjective} {noun}")
        for cat in range(len(CATEGORIES))
        for noun in CATEGORIES[cat][2]
        for brand in BRANDS
        for adjective in ADJECTIVES
    ]
    if products > len(names):
        raise ValueError(f"products={products} is more than the {len(names)} distinct names the word lists give")
    chosen = rng.sample(names, products)
    items: list[dict[str, Any]] = []
    for pid, (cat, name) in enumerate(chosen, start=1):
        _name, slug, _nouns, kinds, (low, high) = CATEGORIES[cat]
        noun = name.split(" ", 2)[2]
        options: dict[str, list[str]] = {}
        for kind in kinds:
            if kind == "size":
                options["Size"] = SIZES[rng.randrange(0, 2) : rng.randrange(3, 6)]
            elif kind == "shoe_size":
                options["Size"] = SHOE_SIZES[rng.randrange(0, 3) : rng.randrange(4, 8)]
            else:
                options["Color"] = sorted(rng.sample(COLORS, rng.randint(2, 5)), key=COLORS.index)
        reviews = []
        for _ in range(rng.choice([0, 0, 1, 1, 2, 2, 3, 4, 5, 7])):
            stars = rng.choices([1, 2, 3, 4, 5], weights=[1, 1, 2, 4, 4])[0]
            reviews.append(
                {
                    "author": f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_INITIALS)}.",
                    "rating": stars,
                    "title": rng.choice(REVIEW_TITLES[stars]),
                    "body": REVIEW_BODIES[stars].format(noun=noun.lower()),
                }
            )
        items.append(
            {
                "id": pid,
                "sku": f"SKU-{pid:05d}",
                "name": name,
                "category": slug,
                "price_cents": rng.randint(low * 100, high * 100) // 100 * 100 + rng.choice([0, 49, 95, 99]),
                "stock": rng.choice([0] + [rng.randint(1, 40)] * 9),
                "description": f"{name.split(' ', 2)[1]} {noun.lower()} from the {name.split(' ')[0]} range.",
                "options": options,
                "reviews": reviews,
            }
        )
    return {
        "seed": seed,
        "categories": [{"name": c[0], "slug": c[1]} for c in CATEGORIES],
        "products": items,
    }


def dump_catalog(catalog: dict[str, Any]) -> str:
    """The catalogue as the shipped file holds it: one product a line, so diffs stay readable."""
    head = json.dumps({"seed": catalog["seed"], "categories": catalog["categories"]}, sort_keys=True)
    lines = [json.dumps(p, sort_keys=True, separators=(",", ":")) for p in catalog["products"]]
    return head[:-1] + ', "products": [\n' + ",\n".join(lines) + "\n]}\n"


def load_catalog(path: Path = CATALOG_FILE) -> dict[str, Any]:
    """The shipped catalogue (``tools/generate_shop_data.py`` writes it)."""
    if not path.is_file():
        raise FileNotFoundError(
            f"no shop catalogue at {path}; reinstall agenthub-env-webarena or run tools/generate_shop_data.py"
        )
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def rating(product: dict[str, Any]) -> str:
    """The average star rating as the site shows it (one decimal), or "none" without reviews."""
    reviews = product["reviews"]
    if not reviews:
        return "none"
    return f"{sum(r['rating'] for r in reviews) / len(reviews):.1f}"


def price(cents: int) -> str:
    return f"${cents // 100:,}.{cents % 100:02d}"
