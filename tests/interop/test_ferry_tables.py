"""ferry creates, others read (issue 39, proof item 2): every kind of table ferry writes today,
read back by Spark (delta-spark) and by delta-rs, value for value.

Each test publishes messages it generates itself (shapes.py: ids and values it knows) to a topic
of a mock Kafka cluster, lets `ferry run --until-caught-up` ingest them into a new table, then
has both engines read the table: the schema, every id exactly once, every column's value, the
Kafka (partition, offset) of each row once, and the history. The table kinds: plain (with a
TIMESTAMP_NTZ column too); partitioned by a date derived from a timestamp; after schema
evolution (columns added mid-stream, one inside a struct); after type widening (Spark only:
delta-rs 1.6 refuses typeWidening tables); after `ferry optimize` and
`ferry vacuum`; with checkpoints, read at the latest version, at older versions (time travel)
and from the checkpoint alone once the commits before it are gone.
"""

from __future__ import annotations

import json
import shutil
from datetime import datetime

import deltalake
import pytest

import readers
import shapes
from ferry_harness import Ferry, MockKafka, Pipeline, checkpoint_versions, data_files_on_disk, \
    log_versions
from readers import check_answer, check_history, check_kafka_positions, normalize_expected, \
    read_both

PARTITIONS = 2
TOPICS = ["plain", "partitioned", "evolution", "widening", "optimize", "checkpoints"]


@pytest.fixture(scope="module")
def ferry(ferry_binary, tmp_path_factory):
    work = tmp_path_factory.mktemp("ferry")
    kafka = MockKafka(ferry_binary, [f"{t}:{PARTITIONS}" for t in TOPICS], work / "mock-kafka.log")
    yield Ferry(ferry_binary, kafka, work)
    kafka.close()


def expected_rows(ids, schema, extra=None) -> dict:
    out = {}
    for i in ids:
        row = shapes.expected_row(i)
        if extra is not None:
            row.update(extra(i))
        out[i] = normalize_expected(row, schema)
    return out


def judge(spark, table, schema, expected, version=None, partitions=PARTITIONS):
    """Spark and delta-rs both read `table` (at `version`, default the latest) and see exactly
    `expected`; returns their answers."""
    answers = read_both(spark, table, schema, version)
    for a in answers:
        check_answer(a, schema, expected, table.name)
        if version is None:
            check_kafka_positions(a, len(expected), partitions)
    return answers


# TIMESTAMP_NTZ (Delta's timestampNtz reader-writer feature): the wall clock as written.
NTZ_CLOCKS = ["2026-05-01 12:00:00", "2026-05-02 23:59:59.999999", "1970-01-01 00:00:00.5"]


def test_plain(spark, ferry, workdir):
    table = workdir / "plain"
    template = shapes.template(extra=', "local": "{{cycle:' + ",".join(NTZ_CLOCKS) + '}}"')
    pipeline = Pipeline(table=table, topic="plain", schema=shapes.SCHEMA_DDL + ", local TIMESTAMP_NTZ",
                        max_rows=1000)
    ferry.produce("plain", template, 1, 1500)
    ferry.run_until_caught_up(pipeline)
    ferry.produce("plain", template, 1501, 1500)
    ferry.run_until_caught_up(pipeline)

    schema = shapes.schema(*shapes.SCHEMA_FIELDS, shapes._field("local", "timestamp_ntz"),
                           *shapes.METADATA_FIELDS)
    expected = expected_rows(range(1, 3001), schema, lambda i: {
        "local": datetime.fromisoformat(shapes.cycle(i, NTZ_CLOCKS))})
    judge(spark, table, schema, expected)
    versions = log_versions(table)
    assert versions == list(range(len(versions))) and len(versions) >= 3, versions
    check_history(spark, table, versions)


def test_partitioned_by_derived_date(spark, ferry, workdir):
    table = workdir / "partitioned"
    pipeline = Pipeline(table=table, topic="partitioned", schema=shapes.SCHEMA_DDL,
                        partition_by=["event_date"], columns=[("event_date", "to_date(ts)")],
                        max_rows=700)
    ferry.produce("partitioned", shapes.TEMPLATE, 1, 2000)
    ferry.run_until_caught_up(pipeline)

    schema = shapes.schema(*shapes.SCHEMA_FIELDS, *shapes.METADATA_FIELDS,
                           shapes._field("event_date", "date"))
    expected = expected_rows(range(1, 2001), schema,
                             lambda i: {"event_date": shapes.expected_ts(i).date()})
    judge(spark, table, schema, expected)

    # Both engines see event_date as the partition column, and Spark prunes on it: one day's
    # rows are exactly the ids whose UTC timestamp falls on that day (23:30 at -05:30 is the
    # next day in UTC).
    detail = spark.sql(f"DESCRIBE DETAIL delta.`{table}`").collect()[0]
    assert list(detail["partitionColumns"]) == ["event_date"], detail
    assert deltalake.DeltaTable(str(table)).metadata().partition_columns == ["event_date"]
    day = "2026-03-13"
    got = {r["id"] for r in spark.sql(
        f"SELECT id FROM delta.`{table}` WHERE event_date = DATE'{day}'").collect()}
    want = {i for i in range(1, 2001) if shapes.expected_ts(i).date().isoformat() == day}
    assert got == want and want, f"spark: ids of {day}: {len(got)}, expected {len(want)}"
    dirs = sorted(p.name for p in table.iterdir() if p.name.startswith("event_date="))
    assert f"event_date={day}" in dirs, dirs
    check_history(spark, table, log_versions(table))


def test_schema_evolution(spark, ferry, workdir):
    """Columns added mid-stream (a top-level STRING and DOUBLE, a field inside the `loc` struct):
    older rows read them as null."""
    table = workdir / "evolution"
    pipeline = Pipeline(table=table, topic="evolution", schema=shapes.SCHEMA_DDL,
                        schema_evolution="add_columns", max_rows=400)
    ferry.produce("evolution", shapes.TEMPLATE, 1, 600)
    ferry.run_until_caught_up(pipeline)
    evolved = shapes.template(loc_extra=', "alt": {{seq}}',
                              extra=', "note": "e{{seq}}", "score": {{seq}}.25')
    ferry.produce("evolution", evolved, 601, 600)
    ferry.run_until_caught_up(pipeline)

    loc = shapes._field("loc", shapes._struct(shapes._field("lat", "double"),
                                              shapes._field("lon", "double"),
                                              shapes._field("alt", "long")))
    fields = [loc if f["name"] == "loc" else f for f in shapes.SCHEMA_FIELDS]
    schema = shapes.schema(*fields, *shapes.METADATA_FIELDS, shapes._field("note", "string"),
                           shapes._field("score", "double"))

    def extra(i):
        row = shapes.expected_row(i)
        if i <= 600:
            row["loc"]["alt"] = None
            return {"loc": row["loc"], "note": None, "score": None}
        row["loc"]["alt"] = i
        return {"loc": row["loc"], "note": f"e{i}", "score": i + 0.25}

    judge(spark, table, schema, expected_rows(range(1, 1201), schema, extra))
    # The version before the change still reads with the old schema, in both engines.
    before = next(v for v in log_versions(table)
                  if "note" in (table / "_delta_log" / f"{v:020}.json").read_text()) - 1
    old = shapes.schema(*shapes.SCHEMA_FIELDS, *shapes.METADATA_FIELDS)
    for a in read_both(spark, table, old, before):
        assert a.schema == readers.strip_metadata(old), f"{a.engine} at version {before}"
        assert {r["id"] for r in a.rows} <= set(range(1, 601)), a.engine
    check_history(spark, table, log_versions(table))


def test_type_widening(spark, ferry, workdir):
    """`add_columns_and_widen`: INT values past 2^31 widen `qty` to BIGINT through Delta's
    typeWidening feature. Spark reads the old and the new rows; delta-rs 1.6 does not implement
    typeWidening and must refuse the table naming it (not misread it)."""
    table = workdir / "widening"
    pipeline = Pipeline(table=table, topic="widening", schema=shapes.SCHEMA_DDL,
                        schema_evolution="add_columns_and_widen")
    ferry.produce("widening", shapes.TEMPLATE, 1, 300)
    ferry.run_until_caught_up(pipeline)
    wide = shapes.template(qty="{{seq}}000000000")
    ferry.produce("widening", wide, 301, 300)
    ferry.run_until_caught_up(pipeline)

    fields = [shapes._field("qty", "long") if f["name"] == "qty" else f
              for f in shapes.SCHEMA_FIELDS]
    schema = shapes.schema(*fields, *shapes.METADATA_FIELDS)
    expected = expected_rows(range(1, 601), schema,
                             lambda i: {"qty": i * 1_000_000_000} if i > 300 else {})
    answer = readers.spark_read(spark, table, schema)
    check_answer(answer, schema, expected, table.name)
    check_kafka_positions(answer, 600, PARTITIONS)
    with pytest.raises(Exception, match="typeWidening|TypeWidening"):
        deltalake.DeltaTable(str(table)).to_pyarrow_table()
    check_history(spark, table, log_versions(table))


def test_optimize_and_vacuum(spark, ferry, workdir):
    """Many small commits, then `ferry optimize` (bin-packing) and `ferry vacuum` with no
    retention: both engines read every row from the compacted files, Spark's own VACUUM finds
    nothing left to delete, and the history shows the OPTIMIZE."""
    table = workdir / "optimize"
    pipeline = Pipeline(table=table, topic="optimize", schema=shapes.SCHEMA_DDL,
                        partition_by=["event_date"], columns=[("event_date", "to_date(ts)")],
                        max_rows=150)
    for first in range(1, 1501, 300):
        ferry.produce("optimize", shapes.TEMPLATE, first, 300)
        ferry.run_until_caught_up(pipeline)
    files_before = len(deltalake.DeltaTable(str(table)).file_uris())

    report = json.loads(ferry("optimize", str(table), "--json"))
    vacuum = json.loads(ferry("vacuum", str(table), "--retain", "0h", "--force", "--json"))
    dt = deltalake.DeltaTable(str(table))
    files_after = [u.removeprefix("file://") for u in dt.file_uris()]
    assert len(files_after) < files_before, (files_before, files_after, report)

    schema = shapes.schema(*shapes.SCHEMA_FIELDS, *shapes.METADATA_FIELDS,
                           shapes._field("event_date", "date"))
    expected = expected_rows(range(1, 1501), schema,
                             lambda i: {"event_date": shapes.expected_ts(i).date()})
    judge(spark, table, schema, expected)

    # What is on disk is exactly what the latest version references.
    on_disk = {str(table / f) for f in data_files_on_disk(table)}
    assert on_disk == set(files_after), (
        f"after ferry vacuum ({vacuum}): on disk but not in the table "
        f"{sorted(on_disk - set(files_after))[:5]}, in the table but gone "
        f"{sorted(set(files_after) - on_disk)[:5]}")
    leftovers = spark.sql(f"VACUUM delta.`{table}` RETAIN 0 HOURS DRY RUN").collect()
    assert leftovers == [], f"spark would still delete {leftovers[:5]}"
    spark_h, rs_h = check_history(spark, table, log_versions(table))
    assert "OPTIMIZE" in {h["operation"] for h in spark_h}, [h["operation"] for h in spark_h]
    assert "OPTIMIZE" in {h.get("operation") for h in rs_h}, rs_h[-3:]


def test_checkpoints(spark, ferry, workdir):
    """More commits than the checkpoint interval: ferry's Parquet checkpoints are read by both
    engines at the latest version, at older versions (time travel, before and after a
    checkpoint), and alone, once the commits they cover are gone."""
    table = workdir / "checkpoints"
    pipeline = Pipeline(table=table, topic="checkpoints", schema=shapes.SCHEMA_DDL,
                        table_properties={"delta.checkpointInterval": "4"})
    per_run = 100
    runs = 9
    version_after = {}  # run number -> the table version holding ids 1 .. run * per_run
    for run in range(1, runs + 1):
        ferry.produce("checkpoints", shapes.TEMPLATE, (run - 1) * per_run + 1, per_run)
        ferry.run_until_caught_up(pipeline)
        version_after[run] = log_versions(table)[-1]
    versions = log_versions(table)
    checkpoints = checkpoint_versions(table)
    assert len(checkpoints) >= 2, f"checkpoints at {checkpoints}, log {versions}"
    assert (table / "_delta_log" / "_last_checkpoint").exists()

    schema = shapes.schema(*shapes.SCHEMA_FIELDS, *shapes.METADATA_FIELDS)
    judge(spark, table, schema, expected_rows(range(1, runs * per_run + 1), schema))

    # Time travel: a version before the first checkpoint, and the first one at or after it.
    picks = sorted({1, next(r for r in version_after if version_after[r] >= checkpoints[0])})
    for run in picks:
        judge(spark, table, schema, expected_rows(range(1, run * per_run + 1), schema),
              version=version_after[run])
    check_history(spark, table, versions)

    # The latest checkpoint alone: a copy of the table without the commits it covers (as log
    # cleanup leaves it) reads the same, in both engines.
    copy = workdir / "checkpoints-trimmed"
    shutil.copytree(table, copy)
    last = checkpoints[-1]
    for v in versions:
        if v <= last:
            (copy / "_delta_log" / f"{v:020}.json").unlink()
    judge(spark, copy, schema, expected_rows(range(1, runs * per_run + 1), schema))
