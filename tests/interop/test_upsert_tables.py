"""Upsert pipelines (docs/cdc.md, issue 42): a keyed change stream with updates, deletes
(tombstones), re-inserts of deleted keys and new keys, applied by `ferry run` that is SIGKILLed at
random moments and restarted, into a table with deletion vectors and into a copy-on-write table.
Spark and delta-rs then read each table and must see exactly the current state the test computes
by replaying the same changes itself: every live key once with its last value, no deleted key.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time

import deltalake
import pyarrow
import pytest

from ferry_harness import MockKafka, run_ferry

PARTITIONS = 2
TOPICS = ["upsert_dv", "upsert_cow"]

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


def replay() -> dict[int, str]:
    state: dict[int, str] = {}
    for op, first, count, tag in ROUNDS:
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


def produce(ferry: str, kafka: MockKafka, topic: str) -> None:
    for op, first, count, tag in ROUNDS:
        value = '{"id": {{seq}}, "v": "' + tag + '-{{seq}}"}' if op == "upsert" else ""
        run_ferry(ferry, "produce", "kafka", "--brokers", kafka.bootstrap, "--topic", topic,
                  "--template", value, "--key", '{"id": {{seq}}}', "--start", str(first),
                  "--count", str(count))


def config(path, table, topic, brokers, deletion_vectors: bool) -> None:
    props = '"delta.enableDeletionVectors" = "true"' if deletion_vectors else ""
    path.write_text(f"""
[log]
level = "warn"

[[pipeline]]
id = "upsert"
table = "{table}"
schema = "id BIGINT NOT NULL, v STRING"
mode = "upsert"
key = ["id"]
table_properties = {{ {props} }}
on_bad_record = "fail"

[pipeline.kafka]
brokers = "{brokers}"
topics = ["{topic}"]
assignment = "manual"
start = "earliest"

[pipeline.decode]
format = "json"

[pipeline.batch]
max_rows = 250
max_latency = "100ms"
""")


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
