"""ferry optimize on the tables Spark creates with row tracking and with liquid clustering
(issue 39: "`_metadata.row_id` unique and unchanged by a later ferry optimize"; "`ferry optimize`
on a clustered table clusters by those columns").

Spark creates two tables and writes rows of its own into each: one with row tracking and
deletion vectors (and a DELETE, so some of Spark's files carry DVs), one clustered by `k`
(CLUSTER BY). `ferry run` ingests ids from a JetStream stream into both, in several commits.
Then:
- row tracking: Spark reads `_metadata.row_id` and `_metadata.row_commit_version` of every row,
  `ferry optimize` rewrites the table into one file, and Spark reads them again: the same for
  every row, and the table holds one file without DVs; delta-rs reads the same rows.
- clustering: the files' ranges of `k` (their stats, as delta-rs lists them) overlap before;
  `ferry optimize --full --target-size` small rewrites the table into several files that follow one
  another in `k` (each file's max at most the next one's min), its adds name the clustering
  provider, Spark's DESCRIBE DETAIL still says CLUSTER BY (k), Spark and delta-rs read the same
  rows as before, and Spark's own OPTIMIZE runs on the table afterwards.
"""

from __future__ import annotations

import json
from pathlib import Path

import deltalake
import pyarrow as pa
import pytest

from ferry_harness import JetStreamPipeline, jetstream_config, log_versions, run_ferry

STREAM = "optimize"
DDL = "id BIGINT NOT NULL, k BIGINT, _seq BIGINT"
# k: 0..96 in a scrambled order, so every ferry commit spans the whole range.
KS = [(i * 37) % 97 for i in range(97)]
TEMPLATE = '{"id": {{seq}}, "k": {{cycle:' + ",".join(map(str, KS)) + '}}}'
IDS = 3000
SPARK_ROWS = 60


def tracked(spark, table: Path) -> dict:
    """id -> (row id, row commit version), as Spark reconstructs them."""
    rows = (spark.read.format("delta").load(str(table))
            .select("id", "_metadata.row_id", "_metadata.row_commit_version").collect())
    out = {r["id"]: (r["row_id"], r["row_commit_version"]) for r in rows}
    assert len(out) == len(rows), f"{table.name}: Spark read an id twice"
    return out


def spark_ids(spark, table: Path) -> list:
    return sorted(r["id"] for r in spark.read.format("delta").load(str(table)).select("id")
                  .collect())


def deltars_ids(table: Path) -> list:
    """delta-rs through its query engine (it applies deletion vectors)."""
    dt = deltalake.DeltaTable(str(table))
    result = pa.table(deltalake.QueryBuilder().register("t", dt)
                      .execute("SELECT id FROM t").read_all())
    return sorted(result.column("id").to_pylist())


def k_ranges(table: Path) -> list:
    """(min k, max k) of every live file, from the stats delta-rs reads, in order."""
    adds = deltalake.DeltaTable(str(table)).get_add_actions(flatten=True)
    adds = pa.table(adds) if not isinstance(adds, pa.Table) else adds
    return sorted(zip(adds.column("min.k").to_pylist(), adds.column("max.k").to_pylist()))


def commit_actions(table: Path, version: int) -> list:
    text = (table / "_delta_log" / f"{version:020d}.json").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_ferry_optimize_keeps_row_ids_and_clusters(spark, nats, ferry_binary, workdir):
    rt = workdir / "row_tracking"
    cl = workdir / "clustered"
    spark.sql(f"CREATE TABLE delta.`{rt}` ({DDL}) USING delta TBLPROPERTIES ("
              "'delta.enableRowTracking' = 'true', 'delta.enableDeletionVectors' = 'true')")
    spark.sql(f"CREATE TABLE delta.`{cl}` ({DDL}) USING delta CLUSTER BY (k)")
    for table in (rt, cl):
        for half in (0, 1):
            first = 1 + half * SPARK_ROWS // 2
            spark.sql(f"INSERT INTO delta.`{table}` (id, k) SELECT -id, id % 97 "
                      f"FROM range({first}, {first + SPARK_ROWS // 2})")
    spark.sql(f"DELETE FROM delta.`{rt}` WHERE id % 3 = 0")
    assert any(p.name.startswith("deletion_vector_") for p in rt.iterdir()), (
        "Spark's DELETE wrote no deletion vector")

    # ferry appends, 500 rows a commit.
    for name in ("rt", "cl"):
        run_ferry(ferry_binary, "produce", "nats", "--server", nats.url, "--stream", STREAM,
                  "--subject", f"o.{name}", "--create-stream", "--stream-subject", "o.>",
                  "--template", TEMPLATE, "--first", "1", "--count", str(IDS), "--msg-id")
    config = jetstream_config(workdir / "ferry.toml", nats.url, [
        JetStreamPipeline(id="rt", table=rt, stream=STREAM, subject="o.rt"),
        JetStreamPipeline(id="cl", table=cl, stream=STREAM, subject="o.cl")])
    run_ferry(ferry_binary, "run", "--config", str(config), "--until-caught-up",
              "--max-wait", "60s")
    expected_ids = sorted([i for i in range(-SPARK_ROWS, 0)] + list(range(1, IDS + 1)))
    expected_rt = sorted([i for i in range(-SPARK_ROWS, 0) if i % 3 != 0]
                         + list(range(1, IDS + 1)))

    # --- Row tracking ---
    before = tracked(spark, rt)
    assert sorted(before) == expected_rt
    assert len({v[0] for v in before.values()}) == len(before), "row ids repeat before optimize"
    files_before = spark.sql(f"DESCRIBE DETAIL delta.`{rt}`").collect()[0]["numFiles"]
    assert files_before >= 4, f"expected several files before optimize, got {files_before}"
    out = json.loads(run_ferry(ferry_binary, "optimize", str(rt), "--json"))
    assert out["version"] is not None and out["row_ids_preserved"], out
    after = tracked(spark, rt)
    changed = {i: (before[i], after.get(i)) for i in before if after.get(i) != before[i]}
    assert not changed, f"row ids or commit versions changed by ferry optimize: " \
                        f"{dict(list(changed.items())[:10])}"
    assert sorted(after) == expected_rt
    assert spark.sql(f"DESCRIBE DETAIL delta.`{rt}`").collect()[0]["numFiles"] == 1
    assert not any("deletionVector" in a.get("add", {})
                   for a in commit_actions(rt, out["version"])), "optimize kept a DV"
    info = commit_actions(rt, out["version"])[0]["commitInfo"]
    assert info["tags"]["delta.rowTracking.preserved"] == "true", info
    assert deltars_ids(rt) == expected_rt

    # --- Clustering ---
    ranges = k_ranges(cl)
    overlapping = sum(1 for a, b in zip(ranges, ranges[1:]) if a[1] > b[0])
    assert overlapping >= 3, f"expected overlapping ranges of k before optimize: {ranges}"
    rows_before = sorted((r["id"], r["k"]) for r in spark.read.format("delta").load(str(cl))
                         .select("id", "k").collect())
    # --full: Spark's own files are reclustered too, whatever their provider.
    out = json.loads(run_ferry(ferry_binary, "optimize", str(cl), "--full", "--target-size",
                               "4KiB", "--json"))
    assert out["clustering_columns"] == ["k"], out
    assert out["files_added"] >= 3, out
    ranges = k_ranges(cl)
    assert len(ranges) == out["files_added"], ranges
    for a, b in zip(ranges, ranges[1:]):
        assert a[1] <= b[0], f"files' ranges of k overlap after clustering: {ranges}"
    adds = [a["add"] for a in commit_actions(cl, out["version"]) if "add" in a]
    assert adds and all(a.get("clusteringProvider") == "liquid" for a in adds), adds[:2]
    detail = spark.sql(f"DESCRIBE DETAIL delta.`{cl}`").collect()[0]
    assert list(detail["clusteringColumns"]) == ["k"], detail
    rows_after = sorted((r["id"], r["k"]) for r in spark.read.format("delta").load(str(cl))
                        .select("id", "k").collect())
    assert rows_after == rows_before
    assert spark_ids(spark, cl) == expected_ids
    assert deltars_ids(cl) == expected_ids
    # Spark's own OPTIMIZE accepts the table as ferry left it.
    spark.sql(f"OPTIMIZE delta.`{cl}`")
    assert spark_ids(spark, cl) == expected_ids
    assert log_versions(cl)[-1] >= out["version"]
