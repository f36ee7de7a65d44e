"""What Relay takes in, checked one way wherever it enters: the REST bodies and queries, the tools
(REST, MCP) and the agents' own writes all use these types and checks, so the OpenAPI states exactly
what the engine enforces.

- An **identifier** (session, episode id, reply_to, fact_id, conflict id, ticket id, a tool's id
  arguments): 1-128 printable ASCII characters, spaces only inside. Kept exactly as given: nothing
  is dropped or normalised, so two different ids can never become one.
- **Text** (an episode's or a chat turn's words, a fact's source): kept exactly as written, newlines,
  tabs, emoji joiners and right-to-left marks included. Refused only what cannot be stored: NUL and
  unpaired surrogates; and text with nothing but spaces in it.
- A **name** (subject, object, speaker, customer, address): no control or format characters but
  the joiners ZWJ and ZWNJ (Sinhala, Malayalam, Persian and other scripts spell with them), at most
  200 characters, something besides spaces and joiners; the engine stores its normal form (NFKC,
  spaces collapsed; registry.clean_text) and addresses it by `entities.name_key`.
- A **time**: ISO 8601 with an offset, in the years 1900 to 2199 as written. Every time that
  enters is in this range, so every stored time reads back and date arithmetic around it ("a week
  later", "today") stays far from the ends of what a datetime can hold.

The checks raise InvalidValue (422 `invalid_value`) naming the field; the pydantic types below run
the same checks, so a request the schema allows is one the engine takes."""

from __future__ import annotations

import re
import sys
import unicodedata
from datetime import datetime, timezone
from typing import Annotated

from pydantic import AfterValidator, AwareDatetime, BeforeValidator, Field

from relay_graph.runtime.errors import InvalidValue

MAX_IDENTIFIER = 128
MAX_NAME = 200
MAX_TEXT = 8_000

TIME_MIN_YEAR, TIME_MAX_YEAR = 1900, 2199
TIME_RANGE = f"{TIME_MIN_YEAR} to {TIME_MAX_YEAR}"
# With any offset (at most a day), a time of those years is inside these instants.
TIME_MIN = datetime(TIME_MIN_YEAR - 1, 12, 31, tzinfo=timezone.utc)
TIME_MAX = datetime(TIME_MAX_YEAR + 1, 1, 1, 23, 59, 59, 999_000, tzinfo=timezone.utc)
TIME_PATTERN = r"^(19|20|21)[0-9]{2}-"

IDENTIFIER_PATTERN = r"^[!-~](?:[ -~]*[!-~])?$"


def _escape(code: int) -> str:
    # \uXXXX and \UXXXXXXXX mean the same to Python's re, pydantic's Rust regex and JSON Schema tools.
    return f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}"


def _ranges(codes: list[int]) -> str:
    out, start = [], None
    for i, c in enumerate(codes):
        if start is None:
            start = c
        if i + 1 == len(codes) or codes[i + 1] != c + 1:
            out.append(_escape(start) if start == c else f"{_escape(start)}-{_escape(c)}")
            start = None
    return "".join(out)


# The joiners are part of how some names are spelt ("ශ්‍රී", "می‌خواهم"); name_key drops them.
# Every other format character (bidi overrides and isolates, which can make one name look like
# another, soft hyphens, zero-width spaces) is refused in a name, as controls are.
_JOINERS = [0x200C, 0x200D]
_CONTROL = [c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) in ("Cc", "Cf")]
_SPACE = [c for c in range(sys.maxunicode + 1) if chr(c).isspace() and c not in _CONTROL]
_NOT_NAME = _ranges([c for c in _CONTROL if c not in _JOINERS])
_NOT_NAME_OR_SPACE = _ranges(sorted(_CONTROL + _SPACE))

# NUL cannot be stored; text must hold something besides ASCII spacing.
TEXT_PATTERN = r"^[^\x00]*[^\x00\t\n\x0b\x0c\r ][^\x00]*$"
NAME_PATTERN = f"^[^{_NOT_NAME}]*[^{_NOT_NAME_OR_SPACE}][^{_NOT_NAME}]*$"

_IDENTIFIER = re.compile(IDENTIFIER_PATTERN)
_TEXT = re.compile(TEXT_PATTERN)
_NAME = re.compile(NAME_PATTERN)


def _string(value: object, what: str, limit: int) -> str:
    if not isinstance(value, str):
        raise InvalidValue(f"{what} must be a string")
    if not value:
        raise InvalidValue(f"{what} is empty")
    if len(value) > limit:
        raise InvalidValue(f"{what} is longer than {limit} characters")
    if any("\ud800" <= c <= "\udfff" for c in value):
        raise InvalidValue(f"{what} contains an unpaired surrogate (not valid Unicode text)")
    return value


def check_identifier(value: object, what: str = "id") -> str:
    """An identifier, unchanged; InvalidValue naming `what` otherwise."""
    text = _string(value, what, MAX_IDENTIFIER)
    if not _IDENTIFIER.fullmatch(text):
        raise InvalidValue(f"{what} must be 1 to {MAX_IDENTIFIER} printable ASCII characters "
                           "(letters, digits, punctuation; spaces only inside)")
    return text


def check_text(value: object, what: str = "text", limit: int = MAX_TEXT) -> str:
    """Free text, unchanged (newlines, tabs and format characters kept)."""
    text = _string(value, what, limit)
    if "\x00" in text:
        raise InvalidValue(f"{what} contains a NUL character, which cannot be stored")
    if not _TEXT.fullmatch(text):
        raise InvalidValue(f"{what} is blank")
    return text


def check_name(value: object, what: str = "name", limit: int = MAX_NAME) -> str:
    """A name as given (registry.clean_text makes its normal form); InvalidValue otherwise."""
    text = _string(value, what, limit)
    if not _NAME.fullmatch(text):
        if any(unicodedata.category(c) in ("Cc", "Cf") and ord(c) not in _JOINERS for c in text):
            raise InvalidValue(f"{what} contains control characters")
        raise InvalidValue(f"{what} is empty")
    return text


def check_time(value: datetime, what: str = "time") -> datetime:
    """A time whose year, as written (a naive one is taken as UTC), is 1900 to 2199."""
    if not isinstance(value, datetime):
        raise InvalidValue(f"{what} must be a time")
    if not TIME_MIN_YEAR <= value.year <= TIME_MAX_YEAR:
        raise InvalidValue(f"{what} must be in the years {TIME_RANGE}")
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def _time_validator(value: datetime | None) -> datetime | None:
    return None if value is None else check_time(value)


def _pydantic(check):  # the engine's check as a pydantic validator (ValueError -> 422 with the field)
    def run(value):
        try:
            return check(value, "value")
        except InvalidValue as exc:
            raise ValueError(exc.message.removeprefix("value ")) from None
    return run


def _time_pydantic(value: datetime | None) -> datetime | None:
    try:
        return _time_validator(value)
    except InvalidValue as exc:
        raise ValueError(exc.message.removeprefix("time ")) from None


_NUMBER = re.compile(r"\s*[+-]?\d+(\.\d*)?([eE][+-]?\d+)?\s*")


def _iso_only(value: object) -> object:
    # pydantic would read a number (or a string of digits) as seconds since 1970: the contract's
    # times are ISO 8601, so a number is refused rather than guessed.
    if isinstance(value, (int, float)) or (isinstance(value, str) and _NUMBER.fullmatch(value)):
        raise ValueError("must be an ISO 8601 time, e.g. 2026-09-05T10:00:00+00:00, not a number")
    return value


# The patterns are stated in the schema and run by the checks (Python's re, with their messages).
Identifier = Annotated[str, Field(min_length=1, max_length=MAX_IDENTIFIER,
                                  json_schema_extra={"pattern": IDENTIFIER_PATTERN}),
                       AfterValidator(_pydantic(check_identifier))]


def text_type(limit: int = MAX_TEXT):
    """Text of at most `limit` characters (a Field max_length on top of an Annotated type would
    show in the schema without being the one enforced: the limit is part of the type)."""
    return Annotated[str, Field(min_length=1, max_length=limit, json_schema_extra={"pattern": TEXT_PATTERN}),
                     AfterValidator(_pydantic(check_text))]


def name_type(limit: int = MAX_NAME):
    """A name of at most `limit` characters."""
    return Annotated[str, Field(min_length=1, max_length=limit, json_schema_extra={"pattern": NAME_PATTERN}),
                     AfterValidator(_pydantic(check_name))]


Text = text_type()
ShortText = text_type(MAX_NAME)
Name = name_type()
_TIME_SCHEMA = {"pattern": TIME_PATTERN}
# Engine models take naive times as UTC (the API refuses them first: see AwareTime).
Time = Annotated[datetime, BeforeValidator(_iso_only), AfterValidator(_time_pydantic),
                 Field(description=f"ISO 8601, in the years {TIME_RANGE}", json_schema_extra=_TIME_SCHEMA)]
AwareTime = Annotated[AwareDatetime, BeforeValidator(_iso_only), AfterValidator(_time_pydantic),
                      Field(description=f"ISO 8601 with an offset, e.g. 2026-09-05T10:00:00+00:00, in the "
                                        f"years {TIME_RANGE}", json_schema_extra=_TIME_SCHEMA)]

__all__ = [
    "AwareTime", "IDENTIFIER_PATTERN", "Identifier", "MAX_IDENTIFIER", "MAX_NAME", "MAX_TEXT", "NAME_PATTERN", "Name",
    "ShortText", "TEXT_PATTERN", "name_type", "text_type", "TIME_MAX", "TIME_MIN", "TIME_PATTERN", "TIME_RANGE", "Text", "Time", "check_identifier",
    "check_name", "check_text", "check_time",
]
