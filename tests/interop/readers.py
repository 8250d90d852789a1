"""The two judges: Spark (with Delta Lake's own connector, delta-spark) and delta-rs (`deltalake`)
read a table and return what they see in one plain form, so a test compares each engine's answer
with the rows it expects, value for value.

Normal form of a row: a dict from column name to a Python value, with TIMESTAMP as microseconds
since the epoch (an int: no time zone can shift it), TIMESTAMP_NTZ as its wall-clock ISO text,
DECIMAL as decimal.Decimal, DATE as datetime.date, ARRAY as a list, MAP as a dict, STRUCT as a
dict. The conversion is driven by the expected Delta schema, so an engine returning another type
fails loudly instead of being coerced.
"""

from __future__ import annotations

import calendar
import json
from datetime import date, datetime, timezone
from decimal import Decimal
from pathlib import Path

import deltalake


def _micros(value: datetime) -> int:
    # Spark returns naive datetimes in the Python process's zone (the suite runs with TZ=UTC and
    # spark.sql.session.timeZone=UTC); delta-rs returns aware UTC datetimes.
    if value.tzinfo is not None:
        value = value.astimezone(timezone.utc).replace(tzinfo=None)
    return calendar.timegm(value.timetuple()) * 1_000_000 + value.microsecond


def normalize(value, type_):
    """`value` as read by an engine, in the normal form for the Delta type `type_`."""
    if value is None:
        return None
    if isinstance(type_, dict):
        kind = type_["type"]
        if kind == "struct":
            items = value.asDict() if hasattr(value, "asDict") else dict(value)
            return {f["name"]: normalize(items.get(f["name"]), f["type"]) for f in type_["fields"]}
        if kind == "array":
            return [normalize(v, type_["elementType"]) for v in value]
        if kind == "map":
            pairs = value.items() if isinstance(value, dict) else value
            return {normalize(k, type_["keyType"]): normalize(v, type_["valueType"])
                    for k, v in pairs}
        raise AssertionError(f"unknown type {type_}")
    if type_ == "timestamp":
        assert isinstance(value, datetime), (value, type_)
        return _micros(value)
    if type_ == "timestamp_ntz":
        assert isinstance(value, datetime) and value.tzinfo is None, (value, type_)
        return value.isoformat()
    if type_.startswith("decimal"):
        assert isinstance(value, Decimal), (value, type_)
        return value
    if type_ == "date":
        assert isinstance(value, date) and not isinstance(value, datetime), (value, type_)
        return value
    if type_ in ("long", "integer", "short", "byte"):
        assert isinstance(value, int) and not isinstance(value, bool), (value, type_)
        return value
    if type_ in ("double", "float"):
        assert isinstance(value, float), (value, type_)
        return value
    if type_ == "boolean":
        assert isinstance(value, bool), (value, type_)
        return value
    if type_ == "string":
        assert isinstance(value, str), (value, type_)
        return value
    if type_ == "binary":
        return bytes(value)
    raise AssertionError(f"unknown type {type_}")


def normalize_expected(row: dict, schema: dict) -> dict:
    """An expected row (shapes.expected_row: aware datetimes, dicts) in the normal form."""
    return {f["name"]: normalize(row.get(f["name"]), f["type"]) for f in schema["fields"]
            if f["name"] in row}


def strip_metadata(schema: dict) -> dict:
    """A Delta/Spark schema JSON without `metadata` (comments, widening history), recursively."""
    if isinstance(schema, dict):
        return {k: strip_metadata(v) for k, v in schema.items() if k != "metadata"}
    if isinstance(schema, list):
        return [strip_metadata(v) for v in schema]
    return schema


class Answer:
    """What one engine saw in one version of a table."""

    def __init__(self, engine: str, schema: dict, rows: list[dict], version: int):
        self.engine = engine
        self.schema = schema  # Delta schema JSON without metadata
        self.rows = rows  # normalized by the expected schema
        self.version = version

    def by_id(self) -> dict:
        out = {}
        for r in self.rows:
            assert r["id"] not in out, f"{self.engine}: id {r['id']} read twice"
            out[r["id"]] = r
        return out


def spark_read(spark, table: Path, expected_schema: dict, version: int | None = None) -> Answer:
    reader = spark.read.format("delta")
    if version is not None:
        reader = reader.option("versionAsOf", version)
    df = reader.load(str(table))
    schema = strip_metadata(df.schema.jsonValue())
    types = {f["name"]: f["type"] for f in expected_schema["fields"]}
    rows = [{k: normalize(v, types[k]) if k in types else v for k, v in r.asDict().items()}
            for r in df.collect()]
    if version is None:
        version = spark.sql(f"DESCRIBE HISTORY delta.`{table}` LIMIT 1").collect()[0]["version"]
    return Answer("spark", schema, rows, version)


def deltars_read(table: Path, expected_schema: dict, version: int | None = None) -> Answer:
    dt = deltalake.DeltaTable(str(table), version=version)
    schema = strip_metadata(json.loads(dt.schema().to_json()))
    types = {f["name"]: f["type"] for f in expected_schema["fields"]}
    rows = [{k: normalize(v, types[k]) if k in types else v for k, v in r.items()}
            for r in dt.to_pyarrow_table().to_pylist()]
    return Answer("delta-rs", schema, rows, dt.version())


def deltars_query_read(table: Path, expected_schema: dict, version: int | None = None) -> Answer:
    """delta-rs through its DataFusion query engine (`QueryBuilder`, delta-kernel's log replay):
    unlike `to_pyarrow_table()`, it reads the reader features columnMapping, deletionVectors and
    v2Checkpoint (docs/interop.md)."""
    import pyarrow

    dt = deltalake.DeltaTable(str(table), version=version)
    schema = strip_metadata(json.loads(dt.schema().to_json()))
    types = {f["name"]: f["type"] for f in expected_schema["fields"]}
    result = pyarrow.table(deltalake.QueryBuilder().register("t", dt)
                           .execute("SELECT * FROM t").read_all())
    rows = [{k: normalize(v, types[k]) if k in types else v for k, v in r.items()}
            for r in result.to_pylist()]
    return Answer("delta-rs", schema, rows, dt.version())


def read_both(spark, table: Path, expected_schema: dict, version: int | None = None,
              deltars_query: bool = False) -> list:
    deltars = deltars_query_read if deltars_query else deltars_read
    return [spark_read(spark, table, expected_schema, version),
            deltars(table, expected_schema, version)]


def check_answer(answer: Answer, expected_schema: dict, expected: dict, where: str) -> None:
    """The engine saw exactly the expected schema and rows: every id once, every value equal.
    `expected` maps id to a normalized row (the metadata columns left out are not compared)."""
    who = f"{answer.engine} reading {where} at version {answer.version}"
    assert answer.schema == strip_metadata(expected_schema), (
        f"{who}: schema\n  got      {json.dumps(answer.schema)}\n"
        f"  expected {json.dumps(strip_metadata(expected_schema))}")
    got = answer.by_id()
    missing = sorted(set(expected) - set(got))
    extra = sorted(set(got) - set(expected))
    assert not missing and not extra, (
        f"{who}: {len(got)} rows, {len(expected)} expected; missing ids {missing[:20]}, "
        f"unexpected ids {extra[:20]}")
    for id_, want in expected.items():
        have = {k: got[id_].get(k) for k in want}
        assert have == want, f"{who}: id {id_}\n  got      {have}\n  expected {want}"


def check_kafka_positions(answer: Answer, count: int, partitions: int) -> None:
    """The metadata columns hold each Kafka (partition, offset) once, and each partition's offsets
    are 0..n-1 with no hole: the rows are exactly the messages of the topic."""
    seen = {}
    for r in answer.rows:
        seen.setdefault(r["_partition"], set()).add(r["_offset"])
    assert set(seen) <= set(range(partitions)), f"{answer.engine}: partitions {sorted(seen)}"
    assert sum(len(v) for v in seen.values()) == count, f"{answer.engine}: repeated offsets"
    for p, offsets in seen.items():
        assert offsets == set(range(len(offsets))), f"{answer.engine}: partition {p} has holes"


def spark_history(spark, table: Path) -> list[dict]:
    """DESCRIBE HISTORY, oldest first."""
    rows = spark.sql(f"DESCRIBE HISTORY delta.`{table}`").collect()
    return sorted((r.asDict() for r in rows), key=lambda r: r["version"])


def deltars_history(table: Path) -> list[dict]:
    return sorted(deltalake.DeltaTable(str(table)).history(), key=lambda r: r["version"])


def check_history(spark, table: Path, versions: list[int]) -> tuple[list, list]:
    """Both engines list one history entry per commit version in `versions`, with timestamps
    that never go back. Returns (Spark's, delta-rs's) entries, oldest first."""
    spark_h = spark_history(spark, table)
    rs_h = deltars_history(table)
    assert [h["version"] for h in spark_h] == versions, (
        f"spark: DESCRIBE HISTORY versions {[h['version'] for h in spark_h]}, log has {versions}")
    assert [h["version"] for h in rs_h] == versions, (
        f"delta-rs: history versions {[h['version'] for h in rs_h]}, log has {versions}")
    stamps = [h["timestamp"] for h in spark_h]
    assert stamps == sorted(stamps), f"spark: history timestamps go back: {stamps}"
    stamps = [h["timestamp"] for h in rs_h]
    assert stamps == sorted(stamps), f"delta-rs: history timestamps go back: {stamps}"
    return spark_h, rs_h
