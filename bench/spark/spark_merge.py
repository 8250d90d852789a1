"""The Spark side of the upsert benchmark (tools/bench_upsert.sh, docs/BENCHMARKS.md "Upserts"):
what users run today to keep a Delta table equal to a keyed change stream, Structured Streaming's
`foreachBatch` with a Delta MERGE per micro-batch (Delta's documented pattern for upserts from
streaming queries), in local mode.

  spark_merge.py --brokers B --topic T --table DIR --checkpoint DIR --scratch DIR
                 [--max-offsets N] [--settings default|tuned]

Each micro-batch (trigger(availableNow=True), at most --max-offsets messages): the value parsed
as {"id", "v", "n"}, a message with an empty value a delete of the key its Kafka key holds;
the changes to one key collapsed to the last (highest offset; a key lives in one partition); then
MERGE INTO the table ON id: a delete deletes, an upsert updates or inserts. Prints "DONE <batches>
<rows>" and each batch's durationMs. At exit it closes the JVM's stdin and waits for it, so that
`/usr/bin/time` counts the JVM's CPU. Jars as spark_ingest.py finds them (make setup-spark-bench).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spark_ingest  # noqa: E402  (its session, Kafka source and report)


def main():
    ap = spark_ingest.job_arguments()
    ap.add_argument("--max-offsets", type=int, default=250000)
    ap.add_argument("--settings", choices=["default", "tuned"], default="tuned")
    args = ap.parse_args()

    spark, jvm = spark_ingest.start_session(
        "ferry-bench-spark-merge", args.scratch, args.settings,
        tuned_extra={
            "spark.driver.memory": "3g",  # a MERGE into 10 M rows needs more than 1g
            # Without it, a batch of 250,000 changes failed: "Not enough memory to build and
            # broadcast the table" (OutOfMemoryError) at 3g; Spark's error names this workaround.
            "spark.sql.autoBroadcastJoinThreshold": "-1",
        })
    from delta.tables import DeltaTable
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    row = T.StructType([T.StructField("id", T.LongType()), T.StructField("v", T.StringType()),
                        T.StructField("n", T.LongType())])
    key = T.StructType([T.StructField("id", T.LongType())])
    source = spark_ingest.kafka_stream(spark, args.brokers, args.topic, args.max_offsets)
    changes = source.select(
        F.from_json(F.col("key").cast("string"), key)["id"].alias("key_id"),
        F.from_json(F.col("value").cast("string"), row).alias("r"),
        ((F.col("value").isNull()) | (F.length("value") == 0)).alias("deleted"),
        F.col("partition"), F.col("offset"))
    target = DeltaTable.forPath(spark, args.table)

    def merge(batch, batch_id):
        last = Window.partitionBy("key_id").orderBy(F.col("offset").desc())
        latest = (batch.withColumn("rank", F.row_number().over(last)).where("rank = 1")
                  .select(F.col("key_id").alias("id"), F.col("r.v").alias("v"),
                          F.col("r.n").alias("n"), "deleted"))
        (target.alias("t").merge(latest.alias("s"), "t.id = s.id")
         .whenMatchedDelete(condition="s.deleted")
         .whenMatchedUpdate(set={"v": "s.v", "n": "s.n"})
         .whenNotMatchedInsert(condition="NOT s.deleted",
                               values={"id": "s.id", "v": "s.v", "n": "s.n"})
         .execute())

    q = (changes.writeStream.foreachBatch(merge).option("checkpointLocation", args.checkpoint)
         .trigger(availableNow=True).start())
    q.awaitTermination()
    spark_ingest.finish(spark, jvm, q)


if __name__ == "__main__":
    main()
