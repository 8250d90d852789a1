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

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spark_ingest  # noqa: E402  (its jars() and TUNED)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--brokers", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--scratch", required=True)
    ap.add_argument("--max-offsets", type=int, default=250000)
    ap.add_argument("--settings", choices=["default", "tuned"], default="tuned")
    args = ap.parse_args()

    if not os.environ.get("JAVA_HOME") and os.path.isdir(spark_ingest.JAVA_17):
        os.environ["JAVA_HOME"] = spark_ingest.JAVA_17
    from delta.tables import DeltaTable
    from pyspark.sql import SparkSession, Window
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    b = (SparkSession.builder.master("local[2]").appName("ferry-bench-spark-merge")
         .config("spark.jars", ",".join(spark_ingest.jars()))
         .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
         .config("spark.sql.catalog.spark_catalog",
                 "org.apache.spark.sql.delta.catalog.DeltaCatalog")
         .config("spark.sql.session.timeZone", "UTC")
         .config("spark.driver.host", "127.0.0.1")
         .config("spark.driver.bindAddress", "127.0.0.1")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.local.dir", os.path.join(args.scratch, "local"))
         .config("spark.sql.warehouse.dir", os.path.join(args.scratch, "warehouse"))
         .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={args.scratch}"))
    if args.settings == "tuned":
        for k, v in spark_ingest.TUNED.items():
            b = b.config(k, v)
        b = b.config("spark.driver.memory", "3g")  # a MERGE into 10 M rows needs more than 1g
        # Without it, a batch of 250,000 changes failed: "Not enough memory to build and
        # broadcast the table" (OutOfMemoryError) at 3g; Spark's error names this workaround.
        b = b.config("spark.sql.autoBroadcastJoinThreshold", "-1")
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    jvm = spark.sparkContext._gateway.proc

    row = T.StructType([T.StructField("id", T.LongType()), T.StructField("v", T.StringType()),
                        T.StructField("n", T.LongType())])
    key = T.StructType([T.StructField("id", T.LongType())])
    source = (spark.readStream.format("kafka")
              .option("kafka.bootstrap.servers", args.brokers)
              .option("subscribe", args.topic)
              .option("startingOffsets", "earliest")
              .option("failOnDataLoss", "true")
              .option("maxOffsetsPerTrigger", str(args.max_offsets))
              .load())
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
    progress = q.recentProgress
    print(f"DONE {len(progress)} {sum(p['numInputRows'] for p in progress)}", flush=True)
    for p in progress:
        print(f"BATCH {p['batchId']} rows {p['numInputRows']} durationMs {p['durationMs']}",
              flush=True)
    spark.stop()
    if jvm is not None:
        jvm.stdin.close()
        jvm.wait()


if __name__ == "__main__":
    main()
