"""How money is written in each currency: its symbol, and whether it has a minor unit. Shared by
the catalogue's prices (desk.catalogue.pricing) and the `relay.money` function (udf), so a price
reads the same from Python and from a query."""

from __future__ import annotations

# Currencies priced in whole units (no minor unit in everyday prices).
ZERO_DECIMAL: frozenset[str] = frozenset({"JPY", "KRW", "CLP", "IDR", "COP", "VND", "HUF", "ISK", "PYG", "UGX"})

SYMBOLS: dict[str, str] = {
    "USD": "US$", "INR": "₹", "EUR": "€", "GBP": "£", "CHF": "CHF ", "SEK": "kr ", "NOK": "kr ", "DKK": "kr ",
    "PLN": "zł ", "CAD": "CA$", "MXN": "MX$", "BRL": "R$", "ARS": "ARS$", "CLP": "CLP$", "COP": "COL$",
    "PEN": "S/ ", "AUD": "A$", "NZD": "NZ$", "SGD": "S$", "JPY": "¥", "KRW": "₩", "MYR": "RM", "IDR": "Rp ",
    "PHP": "₱", "THB": "฿", "AED": "AED ", "SAR": "SAR ", "QAR": "QAR ", "EGP": "E£", "ZAR": "R",
    "KES": "KSh ", "NGN": "₦", "MAD": "MAD ",
}
