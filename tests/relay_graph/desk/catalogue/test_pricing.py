"""Price derivation: local conventions, currencies and tax per country (pure)."""

from __future__ import annotations

import pytest

from relay_graph.desk.catalogue import pricing
from relay_graph.desk.catalogue.footprint import footprint
from relay_graph.desk.catalogue.pricing import charm, display, local_price


def test_every_served_country_has_its_own_tax_rate_price_level_and_reference_rate() -> None:
    fp = footprint()
    for code, country in fp.countries.items():
        assert code in pricing.TAX_RATES, code
        assert code in pricing.PRICE_LEVEL, code
        assert country.currency in pricing.USD_RATE, (code, country.currency)
        assert 0 <= pricing.TAX_RATES[code] < 0.3


@pytest.mark.parametrize(
    ("raw", "currency", "expected"),
    [
        (24.30, "USD", 24.99),  # under 100 with cents: .99
        (7.00, "GBP", 6.99),
        (99.20, "EUR", 99.99),
        (626.25, "INR", 629.0),  # two significant figures up, ending in 9
        (4300.0, "JPY", 4299.0),
        (4301.0, "JPY", 4399.0),
        (58.2, "JPY", 59.0),  # no cents in yen
        (12345.0, "ARS", 12999.0),
        (0.0, "USD", 0.0),
    ],
)
def test_charm_rounding_follows_local_conventions(raw: float, currency: str, expected: float) -> None:
    assert charm(raw, currency) == expected


def test_a_price_is_base_times_level_times_rate_rounded_then_taxed() -> None:
    p = local_price(25.0, "IN", "INR")  # 25 x 0.30 x 83.5 = 626.25 -> 629
    assert (p.currency, p.amount, p.tax_rate) == ("INR", 629.0, 0.18)
    assert p.tax_amount == pytest.approx(113.22)
    assert p.price_incl_tax == pytest.approx(742.22)
    assert (p.display, p.display_incl_tax) == ("₹629", "₹742.22")


def test_no_tax_on_internet_access_in_the_us_and_whole_units_in_japan() -> None:
    us = local_price(40.0, "US", "USD")
    assert (us.amount, us.tax_amount, us.price_incl_tax, us.display) == (39.99, 0.0, 39.99, "US$39.99")
    jp = local_price(40.0, "JP", "JPY")  # 40 x 0.75 x 155 = 4650 -> 4699, +10%
    assert (jp.amount, jp.tax_amount, jp.price_incl_tax) == (4699.0, 470.0, 5169.0)
    assert jp.display == "¥4,699"


def test_a_country_outside_the_table_gets_the_documented_defaults() -> None:
    p = local_price(10.0, "ZZ", "USD")
    assert p.tax_rate == pricing.DEFAULT_TAX_RATE
    assert p.amount == charm(10.0 * pricing.DEFAULT_PRICE_LEVEL, "USD")


def test_an_unknown_currency_is_refused() -> None:
    with pytest.raises(ValueError):
        local_price(10.0, "IN", "XXX")


def test_display_keeps_cents_only_where_they_mean_something() -> None:
    assert display(24.99, "EUR") == "€24.99"
    assert display(1099.0, "INR") == "₹1,099"
    assert display(1296.82, "INR") == "₹1,296.82"
