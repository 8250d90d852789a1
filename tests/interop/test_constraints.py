"""Spark creates, ferry appends, Spark reads (issue 39): a table with generated columns, a column
default, an identity column and a CHECK constraint, made and first written by Spark exactly as a
Databricks user would; ferry ingests a topic into it; Spark reads it back.

What Spark must see: every generated value equal to Spark's own evaluation of the generation
expression, the default where the message had no value, identity values unique, above the
start and on its grid (and Spark's own next insert continues above ferry's), and no row that
breaks the constraint; the messages that break a rule are in ferry's dead-letter table, each
naming the rule. A second table has a CHECK constraint on a field inside a struct and a NOT
NULL field inside a nullable struct: the rows that break them (a NULL struct breaks its NOT NULL
field, as Spark's own writer says) are dead letters naming the constraint.
"""

from __future__ import annotations

import pytest

from ferry_harness import Ferry, MockKafka, kafka_json_toml, spark_create_table

TOPIC = "constrained"
NESTED_TOPIC = "nested"


@pytest.fixture(scope="module")
def ferry(ferry_binary, tmp_path_factory):
    work = tmp_path_factory.mktemp("ferry")
    kafka = MockKafka(ferry_binary, [f"{TOPIC}:1", f"{NESTED_TOPIC}:1"], work / "mock-kafka.log")
    yield Ferry(ferry_binary, kafka, work)
    kafka.close()


def config(table, dead, brokers: str, topic: str = TOPIC) -> str:
    # No `schema`: the table's (Spark's) is used, as a user appending to an existing table would.
    return f"""
[log]
level = "warn"

[[pipeline]]
id = "interop"
table = "{table}"
on_bad_record = "dead_letter"
dead_letter_table = "{dead}"

""" + kafka_json_toml(brokers, topic, 400, "60s")


def test_spark_table_with_rules(spark, ferry, workdir):
    table = workdir / "rules"
    dead = workdir / "rules_dead_letter"
    spark_create_table(
        spark, table, """
          id BIGINT NOT NULL,
          payload STRING,
          id_mod BIGINT GENERATED ALWAYS AS (id % 10),
          shout STRING GENERATED ALWAYS AS (upper(concat(payload, '!'))),
          note STRING DEFAULT 'none',
          seq BIGINT GENERATED ALWAYS AS IDENTITY (START WITH 100 INCREMENT BY 10)""",
        properties={"delta.feature.allowColumnDefaults": "supported"},
        constraints={"small_id": "id < 1000000"},
        rows="(id, payload) VALUES (0, 'spark'), (1, 'spark')")

    # 1000 good messages, then three that break a rule, then 500 more good ones.
    ferry.produce(TOPIC, '{"id": {{seq}}, "payload": "m{{seq}}"}', 1000, 1000)
    ferry.produce(TOPIC, '{"id": 5000000, "payload": "too big"}', 0, 1)
    ferry.produce(TOPIC, '{"id": 7, "id_mod": 3}', 0, 1)
    ferry.produce(TOPIC, '{"id": 8, "seq": 42}', 0, 1)
    ferry.produce(TOPIC, '{"id": {{seq}}, "payload": "m{{seq}}", "note": "given"}', 2000, 500)
    path = ferry.workdir / "constrained.toml"
    path.write_text(config(table, dead, ferry.kafka.bootstrap))
    ferry("run", "--config", str(path), "--until-caught-up", "--max-wait", "60s")

    # Spark writes once more: its identity values must continue above ferry's.
    spark.sql(f"INSERT INTO delta.`{table}` (id, payload) VALUES (2, 'spark again')")

    df = spark.read.format("delta").load(str(table))
    rows = df.collect()
    assert len(rows) == 3 + 1500, len(rows)
    ids = sorted(r.id for r in rows)
    assert ids == [0, 1, 2] + list(range(1000, 2500)), ids[:10]
    # Generated values equal to Spark's own evaluation of the expressions.
    wrong = df.where("NOT (id_mod <=> id % 10) OR NOT (shout <=> upper(concat(payload, '!')))")
    assert wrong.count() == 0, wrong.limit(5).collect()
    for r in rows:
        if 1000 <= r.id < 2000:
            assert r.note == "none", r
        elif r.id >= 2000:
            assert r.note == "given", r
    seqs = [r.seq for r in rows]
    assert len(set(seqs)) == len(seqs), "identity values repeat"
    assert all(s >= 100 and (s - 100) % 10 == 0 for s in seqs), sorted(seqs)[:10]
    spark_last = next(r.seq for r in rows if r.id == 2)
    assert spark_last == max(seqs), (spark_last, max(seqs))
    assert df.where("id >= 1000000").count() == 0

    errors = [r.error for r in spark.read.format("delta").load(str(dead)).collect()]
    assert len(errors) == 3, errors
    text = "\n".join(errors)
    assert "CHECK constraint 'small_id' (id < 1000000)" in text, text
    assert "generated column 'id_mod'" in text, text
    assert "identity column 'seq'" in text, text


def test_spark_table_with_nested_rules(spark, ferry, workdir):
    table = workdir / "nested_rules"
    dead = workdir / "nested_rules_dead_letter"
    spark_create_table(spark, table, "id BIGINT NOT NULL, s STRUCT<x: INT, tag: STRING NOT NULL>",
                       constraints={"positive_x": "s.x > 0"},
                       rows="VALUES (0, named_struct('x', 1, 'tag', 'spark'))")

    ferry.produce(NESTED_TOPIC, '{"id": {{seq}}, "s": {"x": {{seq}}, "tag": "m{{seq}}"}}', 1, 300)
    ferry.produce(NESTED_TOPIC, '{"id": 5000, "s": {"x": -5, "tag": "negative"}}', 0, 1)
    ferry.produce(NESTED_TOPIC, '{"id": 5001, "s": null}', 0, 1)
    ferry.produce(NESTED_TOPIC, '{"id": {{seq}}, "s": {"x": {{seq}}, "tag": "m{{seq}}"}}', 301, 200)
    path = ferry.workdir / "nested.toml"
    path.write_text(config(table, dead, ferry.kafka.bootstrap, NESTED_TOPIC))
    ferry("run", "--config", str(path), "--until-caught-up", "--max-wait", "60s")

    df = spark.read.format("delta").load(str(table))
    rows = df.collect()
    assert sorted(r.id for r in rows) == list(range(0, 501)), len(rows)
    assert all(r.s is not None and r.s.tag is not None and r.s.x > 0 for r in rows)
    assert all(r.s.tag == ("spark" if r.id == 0 else f"m{r.id}") for r in rows)
    # Spark's own writer still accepts the table (ferry kept its constraints as they were).
    spark.sql(f"INSERT INTO delta.`{table}` VALUES (9000, named_struct('x', 2, 'tag', 'again'))")
    assert spark.read.format("delta").load(str(table)).count() == 502

    errors = [r.error for r in spark.read.format("delta").load(str(dead)).collect()]
    # Both bad rows break positive_x: s.x is -5, and NULL in a NULL struct (whose NOT NULL
    # field ferry does not check: a NULL struct holds no field). Spark keeps the constraint's
    # text as it parsed it ("s . x > 0"), so only the name is matched.
    assert len(errors) == 2, errors
    assert all("CHECK constraint 'positive_x'" in e for e in errors), errors
