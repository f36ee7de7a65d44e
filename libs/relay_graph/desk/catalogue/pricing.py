"""How a price in a country is derived, in one place.

    net    = charm( base_usd × PRICE_LEVEL[country] × USD_RATE[currency] )
    tax    = round( net × TAX_RATES[country] )          (to the currency's minor unit)
    gross  = net + tax

- `base_usd`: the offer's price in the United States (offers.py).
- PRICE_LEVEL: what home broadband costs in the country relative to the US (1.0), a rounded,
  purchasing-power-style factor chosen for the demo, not market research.
- USD_RATE: fixed reference exchange rates (local units per US dollar, mid-2024, rounded). They
  are constants on purpose: a catalogue must not change price because a rate feed moved.
- charm(): local price conventions. A price under 100 in a currency with cents ends in .99
  (24.99); anything else is rounded up to two significant figures and ends in 9 (589, 4299,
  12999); currencies without a usable minor unit (ZERO_DECIMAL) have no cents.
- TAX_RATES: the national standard VAT/GST rate on consumer broadband, simplified to one rate per
  country: regional surcharges (US state fees, Canadian HST/PST, Brazilian ICMS by state) are not
  modelled. The US is 0 because the Internet Tax Freedom Act forbids taxing internet access;
  Qatar has no VAT. A country missing from the table is taxed at DEFAULT_TAX_RATE (a served
  country never is: a test checks the table covers them all).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

DEFAULT_TAX_RATE = 0.15

TAX_RATES: dict[str, float] = {
    # India
    "IN": 0.18,  # GST on telecom services
    # Europe (standard VAT)
    "GB": 0.20, "IE": 0.23, "FR": 0.20, "DE": 0.19, "ES": 0.21, "PT": 0.23, "IT": 0.22, "NL": 0.21,
    "BE": 0.21, "CH": 0.081, "AT": 0.20, "SE": 0.25, "NO": 0.25, "DK": 0.25, "FI": 0.255, "PL": 0.23,
    # North America
    "US": 0.0,  # Internet Tax Freedom Act
    "CA": 0.05,  # federal GST only
    # Latin America
    "MX": 0.16, "BR": 0.18, "AR": 0.21, "CL": 0.19, "CO": 0.19, "PE": 0.18,
    # Asia-Pacific
    "AU": 0.10, "NZ": 0.15, "SG": 0.09, "JP": 0.10, "KR": 0.10, "MY": 0.08, "ID": 0.11, "PH": 0.12, "TH": 0.07,
    # Middle East & Africa
    "AE": 0.05, "SA": 0.15, "QA": 0.0, "EG": 0.14, "ZA": 0.15, "KE": 0.16, "NG": 0.075, "MA": 0.20,
}

PRICE_LEVEL: dict[str, float] = {
    "IN": 0.30,
    "GB": 0.85, "IE": 0.95, "FR": 0.80, "DE": 0.90, "ES": 0.75, "PT": 0.70, "IT": 0.80, "NL": 0.90,
    "BE": 0.95, "CH": 1.30, "AT": 0.85, "SE": 0.85, "NO": 1.10, "DK": 0.95, "FI": 0.80, "PL": 0.50,
    "US": 1.00, "CA": 1.05,
    "MX": 0.55, "BR": 0.45, "AR": 0.40, "CL": 0.55, "CO": 0.45, "PE": 0.50,
    "AU": 1.00, "NZ": 0.95, "SG": 0.80, "JP": 0.75, "KR": 0.60, "MY": 0.45, "ID": 0.40, "PH": 0.45, "TH": 0.45,
    "AE": 1.10, "SA": 0.90, "QA": 1.10, "EG": 0.25, "ZA": 0.60, "KE": 0.45, "NG": 0.35, "MA": 0.45,
}
DEFAULT_PRICE_LEVEL = 1.0

USD_RATE: dict[str, float] = {
    "USD": 1.0, "INR": 83.5, "EUR": 0.92, "GBP": 0.79, "CHF": 0.89, "SEK": 10.6, "NOK": 10.7, "DKK": 6.9,
    "PLN": 4.0, "CAD": 1.37, "MXN": 18.0, "BRL": 5.4, "ARS": 900.0, "CLP": 930.0, "COP": 4000.0, "PEN": 3.75,
    "AUD": 1.5, "NZD": 1.65, "SGD": 1.35, "JPY": 155.0, "KRW": 1380.0, "MYR": 4.7, "IDR": 16200.0,
    "PHP": 58.0, "THB": 36.5, "AED": 3.6725, "SAR": 3.75, "QAR": 3.64, "EGP": 48.0, "ZAR": 18.3,
    "KES": 129.0, "NGN": 1480.0, "MAD": 9.9,
}
# Currencies priced in whole units, and their symbols: the wording's own facts (runtime.currencies).
from relay_graph.runtime.currencies import SYMBOLS, ZERO_DECIMAL  # noqa: E402,F401


def decimals(currency: str) -> int:
    return 0 if currency in ZERO_DECIMAL else 2


def charm(raw: float, currency: str) -> float:
    """Round a raw local price to how prices look in that currency (see the module doc)."""
    if raw <= 0:
        return 0.0
    dp = decimals(currency)
    if dp and raw < 100:
        return round(math.ceil(raw - 1e-9) - 0.01, 2)
    digits = int(math.floor(math.log10(raw))) + 1
    step = 10 ** max(digits - 2, 0)
    value = math.ceil(raw / step - 1e-9) * step
    return float(value - 1 if step >= 10 else value)


def display(amount: float, currency: str) -> str:
    """"₹589", "€24.99", "¥4,299": the amount as a customer reads it."""
    dp = decimals(currency)
    if dp and amount >= 100 and float(amount).is_integer():
        dp = 0  # "₹629", not "₹629.00"
    text = f"{amount:,.{dp}f}"
    return f"{SYMBOLS.get(currency, currency + ' ')}{text}"


@dataclass(frozen=True)
class LocalPrice:
    currency: str
    amount: float  # before tax
    tax_rate: float
    tax_amount: float
    price_incl_tax: float
    display: str  # the amount before tax, formatted
    display_incl_tax: str


def local_price(base_usd: float, country: str, currency: str) -> LocalPrice:
    """The price of an offer costing `base_usd` in the US, in `country` and its `currency`."""
    rate = USD_RATE.get(currency)
    if rate is None:
        raise ValueError(f"no reference rate for {currency}")
    level = PRICE_LEVEL.get(country, DEFAULT_PRICE_LEVEL)
    tax_rate = TAX_RATES.get(country, DEFAULT_TAX_RATE)
    dp = decimals(currency)
    net = charm(base_usd * level * rate, currency)
    tax = round(net * tax_rate, dp)
    gross = round(net + tax, dp)
    if dp == 0:
        tax, gross = float(int(tax)), float(int(gross))
    return LocalPrice(currency, net, tax_rate, tax, gross, display(net, currency), display(gross, currency))


__all__ = [
    "DEFAULT_PRICE_LEVEL",
    "DEFAULT_TAX_RATE",
    "LocalPrice",
    "PRICE_LEVEL",
    "SYMBOLS",
    "TAX_RATES",
    "USD_RATE",
    "ZERO_DECIMAL",
    "charm",
    "decimals",
    "display",
    "local_price",
]
