"""The built-in shop served for real on 127.0.0.1: every page type, the forms, isolated sessions, reset."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from agenthub_env_webarena.shop import (
    ShopError,
    close_session_site,
    new_session_site,
    reset_session_site,
    shop_helpers,
    start_shop,
)
from agenthub_env_webarena.shop.app import SECRET_HEADER

# One pooled client for the file: a fresh client per request costs more than the request.
http = httpx.Client(trust_env=False, timeout=30)


@pytest.fixture(scope="module")
def shop() -> Iterator[str]:
    url, stop = start_shop()
    yield url
    stop()
    http.close()


@pytest.fixture
def session(shop: str) -> Iterator[str]:
    url = new_session_site(shop)
    yield url
    close_session_site(url)


def add(session: str, product_id: int, qty: int = 1, **options: str) -> httpx.Response:
    return http.post(f"{session}/cart/add", data={"product_id": str(product_id), "qty": str(qty), **options})


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/", "Featured products"),
        ("/search?q=acme+hoodie", "results for &quot;acme hoodie&quot;"),
        ("/search?q=acme+hoodie&sort=price_asc&page=1", "Page 1 of"),
        ("/category/clothing?sort=price_desc&page=2", "Page 2 of"),
        ("/product/00010", "Add to Cart"),
        ("/cart", "Your cart is empty."),
        ("/checkout", "add a product before checking out"),
        ("/orders", "Order #000000005"),
        ("/orders/000000001", 'id="order-details"'),
        ("/account", "Emma Lopez"),
    ],
)
def test_every_page_type_is_served(session: str, path: str, expected: str) -> None:
    response = http.get(session + path)
    assert response.status_code == 200 and expected in response.text
    # Accessible markup: every form field has a label, the search box included.
    assert '<label for="search">Search products</label>' in response.text


def test_search_pages_and_categories_agree_with_the_catalogue(session: str) -> None:
    first = http.get(f"{session}/search?q=hoodie").text
    assert "Next page" in first and "300 results" not in first
    cheapest = http.get(f"{session}/category/books?sort=price_asc").text
    prices = [float(p.split("$", 1)[1].split(" ")[0]) for p in cheapest.split("</a> ")[1:21] if p.startswith("$")]
    assert prices and prices == sorted(prices)


def test_missing_things_are_answered_with_what_to_do(shop: str, session: str) -> None:
    assert "POST /_sessions" in http.get(f"{shop}/s/nosuchsession/cart").text
    assert http.get(f"{session}/product/999999").status_code == 404
    assert "the categories are" in http.get(f"{session}/category/nope").text
    assert http.get(f"{session}/orders/999").status_code == 404
    with pytest.raises(ShopError, match="not a shop session URL"):
        reset_session_site(shop)


def test_cart_checkout_and_account_forms(session: str) -> None:
    product = http.get(f"{session}/product/10").text
    assert '<select id="opt-color" name="Color">' in product
    refused = add(session, 10)  # product 10 has colours: one must be chosen
    assert refused.status_code == 400 and "Choose a color" in refused.text
    assert add(session, 10, 2, Color="Blue").status_code == 303
    cart = http.get(f"{session}/cart").text
    assert "Ember Essential Notebook" in cart and "Color: Blue" in cart and "Qty: 2" in cart
    placed = http.post(
        f"{session}/checkout", data={"name": "Emma Lopez", "address": "1 Main St", "shipping": "Express"}
    )
    assert placed.status_code == 303 and placed.headers["location"].endswith("/orders/000000006")
    order = http.get(f"{session}/orders/000000006").text
    assert "Shipping: Express" in order and "Status: Pending" in order and "Color: Blue" in order
    assert "Your cart is empty." in http.get(f"{session}/cart").text
    assert shop_helpers(session)["shopping_get_latest_order_url"]() == f"{session}/orders/000000006"
    http.post(f"{session}/account", data={"phone": "555-9999"})
    assert "Phone: 555-9999" in http.get(f"{session}/account").text


def test_sessions_are_isolated_and_reset_restores_the_template(shop: str) -> None:
    one, two = new_session_site(shop), new_session_site(shop)
    try:
        add(one, 10, Color="White")
        assert shop_helpers(one)["shopping_get_cart_contents"]() == "Ember Essential Notebook | Color: White | Qty: 1"
        assert shop_helpers(two)["shopping_get_cart_contents"]() == ""
        reset_session_site(one)
        assert shop_helpers(one)["shopping_get_cart_contents"]() == ""
        assert "Order #000000005" in http.get(f"{one}/orders").text  # the seeded order history is back
    finally:
        close_session_site(one)
        close_session_site(two)
    assert http.get(f"{one}/").status_code == 404
    with pytest.raises(ShopError, match="404"):
        close_session_site(one)


def test_the_session_api_needs_the_shop_s_secret_and_no_error_or_log_names_a_token(
    shop: str, caplog: pytest.LogCaptureFixture
) -> None:
    site = new_session_site(shop)
    token = site.rsplit("/", 1)[1]
    for method, path in (
        ("POST", "/_sessions"),
        ("POST", f"/_sessions/{token}/reset"),
        ("DELETE", f"/_sessions/{token}"),
    ):
        for headers in ({}, {SECRET_HEADER: "not-the-secret"}):
            refused = http.request(method, shop + path, headers=headers)
            assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden", refused.text
            assert SECRET_HEADER in refused.json()["error"]["message"]
    assert http.get(f"{site}/").status_code == 200  # still open: nothing without the secret touched it
    with caplog.at_level(logging.DEBUG):
        close_session_site(site)
        with pytest.raises(ShopError, match="HTTP 404") as failed:
            close_session_site(site)
    assert token not in str(failed.value) and "/_sessions/…" in str(failed.value)
    assert caplog.records and all(token not in record.getMessage() for record in caplog.records)
    assert all(record.levelno <= logging.DEBUG for record in caplog.records if "shop" in record.name)


def test_the_shop_runs_as_a_child_process_too() -> None:
    url, stop = start_shop(process=True)
    try:
        session = new_session_site(url)
        assert "Featured products" in http.get(session + "/").text
    finally:
        stop()
    with pytest.raises(httpx.ConnectError):
        httpx.get(url + "/_health", trust_env=False)  # a fresh connection: the port is closed


def webarena_type(page: Any, selector: str, text: str) -> None:
    """WebArena's ``type [id] [text] [1]``: click the element's centre, type the text, press Enter."""
    box = page.locator(selector).bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.keyboard.type(text)
    page.keyboard.press("Enter")


def test_the_forms_work_with_webarena_s_type_action_in_a_real_browser(session: str, page: Any) -> None:
    # Selects take typed option names; quantity and account fields start empty, since typing appends.
    page.goto(f"{session}/product/00010")
    webarena_type(page, "select[name=Color]", "Navy")
    webarena_type(page, "#qty", "3")  # Enter in the field submits the form
    page.wait_for_url("**/cart")
    cart = page.locator("#cart").inner_text()
    assert "Color: Navy" in cart and "Qty: 3" in cart
    page.goto(f"{session}/account")
    webarena_type(page, "#acct-phone", "555-0199")
    page.wait_for_url("**/account?saved=1")
    assert "Phone: 555-0199" in page.locator("#account-info").inner_text()
