"""The messages the interop tests publish and the rows they must become, side by side.

A message is rendered by `ferry produce kafka` from a template: {{seq}} is the message's id and
{{cycle:A,B,C}} picks A for id 1, B for 2, C for 3, A again for 4. expected_row(id) computes, from
the same cycles, the row every reader must return for that id, so the expected values come from
the test, never from ferry. The values cover the types ferry writes: integers at their limits,
decimals, doubles, booleans, nulls, non-ASCII and escaped strings, timestamps with offsets and
microseconds (one crossing midnight in UTC), dates, arrays, maps and structs.

Types are written as Delta's schema JSON types (PROTOCOL.md "Schema Serialization Format"), which
is also what Spark's StructType.jsonValue() and delta-rs's Schema.to_json() print.
"""

from __future__ import annotations

from datetime import date, datetime, timezone
from decimal import Decimal


def cycle(seq: int, values: list):
    return values[(seq - 1) % len(values)]


# (text in the message, value after JSON decoding)
NAMES = [("plain", "plain"), ("ünïcödé ✓", "ünïcödé ✓"), ('q\\"uote', 'q"uote'),
         ("tab\\tback\\\\slash", "tab\tback\\slash")]
CENTS = ["05", "50", "99", "00"]
PRICES = ["1.5", "-2.25", "1e3", "null", "0.1"]
QTYS = ["1", "-7", "2147483647", "-2147483648", "null"]
FLAGS = ["true", "false", "null"]
MONTHS = ["1", "2", "3"]
DAYS = ["0", "1", "2", "3", "4"]
HOURS = ["00", "05", "23"]
FRACTIONS = [".123456", ".000001", ".5"]
OFFSETS = ["Z", "+02:00", "-05:30", "Z"]
DATES = ["01", "15", "31"]
TAGS = ["x", "y"]
LATS = ["1.25", "-3.5"]
LONS = ["10", "20", "30"]


def _list(values) -> str:
    return ",".join(v[0] if isinstance(v, tuple) else v for v in values)


def template(loc_extra: str = "", extra: str = "", qty: str = "") -> str:
    """The message template; `loc_extra` is added inside the `loc` object and `extra` at the end
    of the message (schema evolution), each starting with ', '; `qty` replaces qty's values."""
    qty = qty or f"{{{{cycle:{_list(QTYS)}}}}}"
    return (
        '{"id": {{seq}}, '
        f'"name": "n-{{{{seq}}}}-{{{{cycle:{_list(NAMES)}}}}}", '
        f'"amount": {{{{seq}}}}.{{{{cycle:{_list(CENTS)}}}}}, '
        f'"price": {{{{cycle:{_list(PRICES)}}}}}, '
        f'"qty": {qty}, '
        f'"flag": {{{{cycle:{_list(FLAGS)}}}}}, '
        f'"ts": "2026-0{{{{cycle:{_list(MONTHS)}}}}}-1{{{{cycle:{_list(DAYS)}}}}}T'
        f'{{{{cycle:{_list(HOURS)}}}}}:30:15{{{{cycle:{_list(FRACTIONS)}}}}}'
        f'{{{{cycle:{_list(OFFSETS)}}}}}", '
        f'"day": "2025-12-{{{{cycle:{_list(DATES)}}}}}", '
        f'"tags": ["t{{{{seq}}}}", "{{{{cycle:{_list(TAGS)}}}}}"], '
        '"attrs": {"k": "v{{seq}}"}, '
        f'"loc": {{"lat": {{{{cycle:{_list(LATS)}}}}}, "lon": {{{{cycle:{_list(LONS)}}}}}.5'
        f'{loc_extra}}}{extra}'
        '}')


TEMPLATE = template()

SCHEMA_DDL = ("id BIGINT NOT NULL, name STRING, amount DECIMAL(12,2), price DOUBLE, qty INT, "
              "flag BOOLEAN, ts TIMESTAMP, day DATE, tags ARRAY<STRING>, "
              "attrs MAP<STRING,STRING>, loc STRUCT<lat: DOUBLE, lon: DOUBLE>")


def _field(name, type_, nullable=True):
    return {"name": name, "type": type_, "nullable": nullable}


def _struct(*fields):
    return {"type": "struct", "fields": list(fields)}


SCHEMA_FIELDS = [
    _field("id", "long", False),
    _field("name", "string"),
    _field("amount", "decimal(12,2)"),
    _field("price", "double"),
    _field("qty", "integer"),
    _field("flag", "boolean"),
    _field("ts", "timestamp"),
    _field("day", "date"),
    _field("tags", {"type": "array", "elementType": "string", "containsNull": True}),
    _field("attrs", {"type": "map", "keyType": "string", "valueType": "string",
                     "valueContainsNull": True}),
    _field("loc", _struct(_field("lat", "double"), _field("lon", "double"))),
]
# The Kafka partition and offset of each message (ferry_harness.Pipeline declares them after the
# schema and names them in metadata_columns).
METADATA_FIELDS = [_field("_partition", "integer"), _field("_offset", "long")]


def schema(*fields) -> dict:
    return _struct(*fields)


def _json_null(text: str, convert):
    return None if text == "null" else convert(text)


def expected_ts(seq: int) -> datetime:
    text = (f"2026-0{cycle(seq, MONTHS)}-1{cycle(seq, DAYS)}T{cycle(seq, HOURS)}:30:15"
            f"{cycle(seq, FRACTIONS)}{cycle(seq, OFFSETS)}")
    return datetime.fromisoformat(text).astimezone(timezone.utc)


def expected_row(seq: int) -> dict:
    """The row of message `seq` (without the metadata columns, which Kafka assigns)."""
    return {
        "id": seq,
        "name": f"n-{seq}-{cycle(seq, NAMES)[1]}",
        "amount": Decimal(f"{seq}.{cycle(seq, CENTS)}"),
        "price": _json_null(cycle(seq, PRICES), float),
        "qty": _json_null(cycle(seq, QTYS), int),
        "flag": _json_null(cycle(seq, FLAGS), lambda t: t == "true"),
        "ts": expected_ts(seq),
        "day": date(2025, 12, int(cycle(seq, DATES))),
        "tags": [f"t{seq}", cycle(seq, TAGS)],
        "attrs": {"k": f"v{seq}"},
        "loc": {"lat": float(cycle(seq, LATS)), "lon": float(cycle(seq, LONS)) + 0.5},
    }
