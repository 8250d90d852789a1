"""Upsert pipelines (docs/cdc.md, issue 42): a keyed change stream with updates, deletes
(tombstones), re-inserts of deleted keys and new keys, applied by `ferry run` that is SIGKILLed at
random moments and restarted, into a table with deletion vectors and into a copy-on-write table.
Spark and delta-rs then read each table and must see exactly the current state the test computes
by replaying the same changes itself: every live key once with its last value, no deleted key.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import threading
import time

import deltalake
import pyarrow
import pytest

from ferry_harness import (FerryProcess, MockKafka, kafka_json_toml, run_ferry,
                           spark_create_table, wait_for)

PARTITIONS = 2
TOPICS = ["upsert_dv", "upsert_cow", "concurrent_dv", "concurrent_cow", "cdf_append",
          "cdf_upsert"]

# The change stream, in order: (op, first id, count, value tag). Keys partition by hash, so the
# changes to one key keep their order in one partition.
ROUNDS = [
    ("upsert", 1, 2000, "r1"),
    ("upsert", 501, 1000, "r2"),
    ("delete", 1001, 300, None),
    ("upsert", 1201, 50, "r4"),     # deleted keys come back
    ("delete", 1, 100, None),
    ("upsert", 1901, 200, "r6"),    # 100 updates, 100 new keys
    ("delete", 5000, 20, None),     # keys that never existed
    ("upsert", 1, 2100, "r8"),     # everything again, in its turn deleted partly below
    ("delete", 300, 700, None),
]
KILLS = int(os.environ.get("FERRY_UPSERT_KILLS", "4"))


def replay(rounds=ROUNDS, state: dict[int, str] | None = None) -> dict[int, str]:
    """The state a change stream leaves (on top of `state`): the test's own replay."""
    state = {} if state is None else state
    for op, first, count, tag in rounds:
        for i in range(first, first + count):
            if op == "upsert":
                state[i] = f"{tag}-{i}"
            else:
                state.pop(i, None)
    return state


@pytest.fixture(scope="module")
def kafka(ferry_binary, tmp_path_factory):
    work = tmp_path_factory.mktemp("upsert")
    k = MockKafka(ferry_binary, [f"{t}:{PARTITIONS}" for t in TOPICS], work / "mock-kafka.log")
    yield k
    k.close()


def produce(ferry: str, kafka: MockKafka, topic: str, rounds=ROUNDS) -> None:
    for op, first, count, tag in rounds:
        value = '{"id": {{seq}}, "v": "' + tag + '-{{seq}}"}' if op == "upsert" else ""
        run_ferry(ferry, "produce", "kafka", "--brokers", kafka.bootstrap, "--topic", topic,
                  "--template", value, "--key", '{"id": {{seq}}}', "--start", str(first),
                  "--count", str(count))


def config(path, table, topic, brokers, deletion_vectors: bool, level: str = "warn") -> None:
    props = '"delta.enableDeletionVectors" = "true"' if deletion_vectors else ""
    path.write_text(f"""
[log]
level = "{level}"

[[pipeline]]
id = "upsert"
table = "{table}"
schema = "id BIGINT NOT NULL, v STRING"
mode = "upsert"
key = ["id"]
table_properties = {{ {props} }}
on_bad_record = "fail"

""" + kafka_json_toml(brokers, topic, 250, "100ms"))


def run_with_kills(ferry: str, cfg, log, seed: int) -> None:
    """`ferry run` SIGKILLed KILLS times at random moments, then run until caught up."""
    rng = random.Random(seed)
    for _ in range(KILLS):
        with open(log, "ab") as out:
            proc = subprocess.Popen([ferry, "run", "--config", str(cfg)], stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=out)
        try:
            time.sleep(rng.uniform(0.3, 2.0))
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
    run_ferry(ferry, "run", "--config", str(cfg), "--until-caught-up", "--max-wait", "60s")


def deltars_rows(table) -> list[dict] | None:
    """delta-rs's rows. delta-rs 1.6.6's pyarrow reader (`to_pyarrow_table`) refuses a table with
    the deletionVectors reader feature, naming it; its DataFusion reader (`QueryBuilder`) reads
    it and applies the deletion vectors. None if that refuses too (it must name them)."""
    dt = deltalake.DeltaTable(str(table))
    try:
        return dt.to_pyarrow_table().to_pylist()
    except deltalake.exceptions.DeltaProtocolError as e:
        assert "deletionVectors" in str(e), e
    try:
        qb = deltalake.QueryBuilder().register("t", dt)
        return [r for batch in qb.execute("SELECT id, v FROM t")
                for r in pyarrow.record_batch(batch).to_pylist()]
    except Exception as e:  # noqa: BLE001 - any refusal must name the feature
        assert "deletion" in str(e).lower(), e
        print(f"delta-rs refuses the table with deletion vectors: {e}")
        return None


def read_state(spark, table) -> list[tuple[str, dict]]:
    spark_rows = spark.read.format("delta").load(str(table)).collect()
    readers = [("spark", [r.asDict() for r in spark_rows])]
    rs_rows = deltars_rows(table)
    if rs_rows is not None:
        readers.append(("delta-rs", rs_rows))
    out = []
    for engine, rows in readers:
        state: dict[int, str] = {}
        for r in rows:
            assert r["id"] not in state, f"{engine}: id {r['id']} read twice"
            state[r["id"]] = r["v"]
        out.append((engine, state))
    return out


def check_state(spark, table, expected) -> None:
    for engine, got in read_state(spark, table):
        missing = sorted(set(expected) - set(got))
        extra = sorted(set(got) - set(expected))
        assert not missing and not extra, (
            f"{engine}: {len(got)} rows, {len(expected)} expected; missing {missing[:20]}, "
            f"deleted or never written but present {extra[:20]}")
        wrong = [(i, got[i], v) for i, v in expected.items() if got[i] != v]
        assert not wrong, f"{engine}: wrong values (id, got, expected): {wrong[:20]}"


@pytest.mark.parametrize("deletion_vectors", [True, False], ids=["deletion_vectors", "copy_on_write"])
def test_upserts_and_deletes_with_kills(spark, ferry_binary, kafka, workdir, deletion_vectors):
    topic = "upsert_dv" if deletion_vectors else "upsert_cow"
    table = workdir / topic
    produce(ferry_binary, kafka, topic)
    cfg = workdir / "ferry.toml"
    config(cfg, table, topic, kafka.bootstrap, deletion_vectors)
    seed = int(os.environ.get("FERRY_UPSERT_SEED", str(time.time_ns() % 1_000_000)))
    print(f"seed {seed} (FERRY_UPSERT_SEED={seed} repeats the kill times)")
    run_with_kills(ferry_binary, cfg, workdir / "ferry.log", seed)

    expected = replay()
    check_state(spark, table, expected)
    dv_files = list(table.glob("deletion_vector_*.bin"))
    if deletion_vectors:
        assert dv_files, "a deletion-vector table without deletion vector files"
        spark_dv = spark.sql(f"DESCRIBE DETAIL delta.`{table}`").collect()[0]
        assert "deletionVectors" in (spark_dv["tableFeatures"] or []), spark_dv
    else:
        assert not dv_files, f"copy-on-write table with deletion vectors: {dv_files}"

    # Spark compacts the table (its own OPTIMIZE), then more changes: ferry's key index follows
    # the new files, and the state is still exact.
    spark.sql(f"OPTIMIZE delta.`{table}`").collect()
    ROUNDS_AFTER = [("upsert", 1, 150, "r10"), ("delete", 1950, 100, None)]
    for op, first, count, tag in ROUNDS_AFTER:
        value = '{"id": {{seq}}, "v": "' + tag + '-{{seq}}"}' if op == "upsert" else ""
        run_ferry(ferry_binary, "produce", "kafka", "--brokers", kafka.bootstrap, "--topic", topic,
                  "--template", value, "--key", '{"id": {{seq}}}', "--start", str(first),
                  "--count", str(count))
        for i in range(first, first + count):
            if op == "upsert":
                expected[i] = f"{tag}-{i}"
            else:
                expected.pop(i, None)
    run_ferry(ferry_binary, "run", "--config", str(cfg), "--until-caught-up", "--max-wait", "60s")
    check_state(spark, table, expected)


# --- Other writers while ferry applies changes (issue 42: "a Spark OPTIMIZE that rewrote the
# files ferry marks must make ferry retry against the new files, never resurrect or lose a row").

# Ferry's keys are 1..3,199; Spark's own are 9,001..9,200 (ferry inserts them first and never
# touches them again) and -20..-1 (Spark's MERGE inserts them): one writer per key, as
# docs/cdc.md requires.
BEFORE = [("upsert", 1, 3000, "a1"), ("upsert", 9001, 200, "a1")]
# Under the failpoint: the first batch updates existing keys, so it marks files that Spark's
# OPTIMIZE (every file into one) rewrites.
DURING = [
    ("upsert", 1, 1500, "b1"),
    ("delete", 1200, 400, None),
    ("upsert", 1301, 200, "b3"),    # deleted keys come back
    ("upsert", 2500, 700, "b4"),    # 501 updates, 199 new keys
    ("delete", 1, 100, None),
]
# While Spark's second OPTIMIZE and a DELETE race ferry's commits (each side retries).
AFTER = [("upsert", 1, 2000, "c1"), ("delete", 1500, 300, None), ("upsert", 3100, 100, "c3")]


def spark_retrying(what: str, op, allowed: tuple[str, ...], conflicts: list) -> None:
    """Runs a Spark command, retrying it on the Delta conflicts `allowed` (what a job does: Spark
    does not retry them itself); any other failure fails the test."""
    for _ in range(30):
        try:
            op()
            return
        except Exception as e:  # noqa: BLE001 - Spark's Py4J / captured SQL errors
            text = f"{type(e).__name__}: {e}"
            found = sorted(set(re.findall(r"\w*Concurrent\w*Exception", text)) & set(allowed))
            if not found:
                raise AssertionError(f"{what} failed (not an allowed conflict): {text[:2000]}")
            conflicts.append((what, found[0]))
    raise AssertionError(f"{what}: still conflicting after 30 attempts: {conflicts}")


@pytest.mark.parametrize("deletion_vectors", [True, False], ids=["deletion_vectors", "copy_on_write"])
def test_spark_writes_while_ferry_upserts(spark, ferry_binary, kafka, workdir, deletion_vectors):
    """1. ferry loads the table (keys 1..3,000 and Spark's 9,001..9,200).
    2. A `ferry run` armed with `pipeline.before_commit=wait(GO)@1` plans its first batch of
       changes (marking rows in the table's files) and stops before committing. Meanwhile Spark
       commits an OPTIMIZE (which rewrites every file that batch marks), a DELETE and a MERGE on
       its own keys. Then GO: ferry's commit loses to the OPTIMIZE (ConcurrentDeleteDelete),
       ferry plans the batch again against the new files (logged), and goes on.
    3. More changes, with a second Spark OPTIMIZE and a DELETE racing ferry's commits, each
       side retrying its conflicts.
    The state must equal the test's replay: Spark, delta-rs and `ferry verify --key id`."""
    topic = "concurrent_dv" if deletion_vectors else "concurrent_cow"
    table = workdir / topic
    cfg = workdir / "ferry.toml"
    config(cfg, table, topic, kafka.bootstrap, deletion_vectors, level="info")
    produce(ferry_binary, kafka, topic, BEFORE)
    run_ferry(ferry_binary, "run", "--config", str(cfg), "--until-caught-up", "--max-wait", "60s")
    files_before = len(spark.read.format("delta").load(str(table)).inputFiles())
    assert files_before > 1, f"{files_before} file: OPTIMIZE would have nothing to rewrite"

    produce(ferry_binary, kafka, topic, DURING)
    go = workdir / "go"
    log = workdir / "ferry.log"
    ferry = FerryProcess(ferry_binary, cfg, log,
                         failpoints=f"pipeline.before_commit=wait({go})@1")
    spark_conflicts: list = []
    try:
        wait_for("ferry's first upsert plan (failpoint pipeline.before_commit)",
                 lambda: "failpoint pipeline.before_commit: wait" in
                 log.read_text(errors="replace"), proc=ferry)
        spark.sql(f"OPTIMIZE delta.`{table}`").collect()
        spark.sql(f"DELETE FROM delta.`{table}` WHERE id BETWEEN 9001 AND 9050").collect()
        source = spark.range(9101, 9151).union(spark.range(-20, 0))
        source.selectExpr("id", "concat('spark-', CAST(id AS STRING)) AS v") \
            .createOrReplaceTempView("spark_src")
        spark.sql(f"""MERGE INTO delta.`{table}` t USING spark_src s ON t.id = s.id
                      WHEN MATCHED THEN UPDATE SET v = s.v
                      WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)""").collect()
        history = [r.asDict() for r in
                   spark.sql(f"DESCRIBE HISTORY delta.`{table}` LIMIT 3").collect()]
        assert [h["operation"] for h in history] == ["MERGE", "DELETE", "OPTIMIZE"], history
    finally:
        go.touch()  # never leave ferry stalled, whatever failed above
    try:
        wait_for("ferry's replan after Spark's OPTIMIZE",
                 lambda: "planning the batch again" in log.read_text(errors="replace"),
                 proc=ferry)
        text = log.read_text(errors="replace")
        assert "ConcurrentDeleteDelete" in text, text[-3000:]

        # The changes arrive while Spark works: its commands and ferry's commits interleave.
        producer_errors: list = []

        def produce_after():
            try:
                produce(ferry_binary, kafka, topic, AFTER)
            except Exception as e:  # noqa: BLE001 - reported below
                producer_errors.append(e)

        producer = threading.Thread(target=produce_after)
        producer.start()
        spark_retrying("OPTIMIZE", lambda: spark.sql(f"OPTIMIZE delta.`{table}`").collect(),
                       ("ConcurrentDeleteReadException", "ConcurrentDeleteDeleteException"),
                       spark_conflicts)
        spark_retrying(
            "DELETE",
            lambda: spark.sql(f"DELETE FROM delta.`{table}` WHERE id BETWEEN 9051 AND 9060")
            .collect(),
            ("ConcurrentAppendException", "ConcurrentDeleteReadException",
             "ConcurrentDeleteDeleteException"), spark_conflicts)
        producer.join()
        assert not producer_errors, producer_errors
    finally:
        status = ferry.stop()
    assert status == 0, f"ferry run exited {status}: {log.read_text(errors='replace')[-3000:]}"
    run_ferry(ferry_binary, "run", "--config", str(cfg), "--until-caught-up", "--max-wait", "60s")
    text = log.read_text(errors="replace")
    print(f"ferry replanned {text.count('planning the batch again')} times; Spark's conflicts: "
          f"{spark_conflicts}")

    expected = replay(BEFORE + DURING + AFTER)
    for i in range(9001, 9061):
        expected.pop(i)
    for i in list(range(9101, 9151)) + list(range(-20, 0)):
        expected[i] = f"spark-{i}"
    check_state(spark, table, expected)
    verify = subprocess.run([ferry_binary, "verify", str(table), "--key", "id", "--expect",
                             str(len(expected))], capture_output=True, text=True, timeout=120)
    assert verify.returncode == 0, f"ferry verify --key id:\n{verify.stdout}\n{verify.stderr}"


# --- The change data feed (delta.enableChangeDataFeed) -------------------------------------------

def test_change_data_feed_table(spark, ferry_binary, kafka, workdir):
    """ferry writes no change data files (`cdc`). An append needs none (its adds are the
    inserts): Spark's change feed reads ferry's rows as inserts. An upsert replaces and deletes
    rows, whose feed needs them: ferry refuses the table, naming the property, and commits
    nothing."""
    table = workdir / "cdf"
    spark_create_table(spark, table, "id BIGINT NOT NULL, v STRING",
                       properties={"delta.enableChangeDataFeed": "true"})
    for topic in ("cdf_append", "cdf_upsert"):
        run_ferry(ferry_binary, "produce", "kafka", "--brokers", kafka.bootstrap, "--topic", topic,
                  "--template", '{"id": {{seq}}, "v": "f-{{seq}}"}', "--key", '{"id": {{seq}}}',
                  "--start", "1", "--count", "100")

    def cdf_config(name: str, topic: str, upsert: str):
        path = workdir / f"{name}.toml"
        # No `schema`: the table's own (Spark's).
        path.write_text(f"""
[log]
level = "warn"

[[pipeline]]
id = "{name}"
table = "{table}"
on_bad_record = "fail"
{upsert}
[pipeline.kafka]
brokers = "{kafka.bootstrap}"
topics = ["{topic}"]
assignment = "manual"
start = "earliest"

[pipeline.decode]
format = "json"
""")
        return path

    append = cdf_config("cdf-append", "cdf_append", "")
    run_ferry(ferry_binary, "run", "--config", str(append), "--until-caught-up", "--max-wait",
              "60s")
    feed = (spark.read.format("delta").option("readChangeFeed", "true")
            .option("startingVersion", 0).load(str(table)).collect())
    changes = sorted((r["id"], r["v"], r["_change_type"]) for r in feed)
    assert changes == [(i, f"f-{i}", "insert") for i in range(1, 101)], changes[:10]

    upsert = cdf_config("cdf-upsert", "cdf_upsert", 'mode = "upsert"\nkey = ["id"]\n')
    versions = sorted((table / "_delta_log").glob("*.json"))
    done = subprocess.run([ferry_binary, "run", "--config", str(upsert), "--until-caught-up",
                           "--max-wait", "60s"], stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=120)
    out = done.stdout + done.stderr
    assert done.returncode != 0, f"ferry upserted into a change-data-feed table:\n{out}"
    assert "delta.enableChangeDataFeed" in out, out
    assert sorted((table / "_delta_log").glob("*.json")) == versions, "ferry committed anyway"
    assert spark.read.format("delta").load(str(table)).count() == 100
