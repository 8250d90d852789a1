"""The Spark side of the Spark head-to-head benchmark (tools/bench_spark.sh, docs/BENCHMARKS.md
"ferry against Spark"): a Structured Streaming job as the seeds' users run it, reading a Kafka
topic with Spark's `kafka` source (spark-sql-kafka-0-10) and writing a Delta table with the
`delta` sink, in local mode.

  spark_ingest.py --brokers B --topic T --table DIR --checkpoint DIR --scratch DIR
                  [--shape nine|latency] [--trigger available-now|default|1s]
                  [--settings default|tuned]

--shape nine: the nine-field row of bench/nine_field_row.h as ToSparkJson writes it (the timestamp
  as a `dateTime` string), parsed with from_json into the same schema ferry is given, the Kafka
  partition and offset as `_partition`/`_offset`, and the seed job's derived column
  date_only = from_unixtime(unix_timestamp(dateTime, 'MM/dd/yyyy - HH:mm:ss Z'), 'MM/dd/yyyy').
--shape latency: {"id": N, "sent": "<ISO-8601 µs>"} into (id, sent TIMESTAMP), as
  tools/bench_latency.sh sends them, for bench/visible_latency.
--trigger: available-now = trigger(availableNow=True) (drain what is there, then stop); default =
  no trigger (a micro-batch as soon as the previous one ends); 1s = processingTime='1 second'.
--settings: default = what the job needs and nothing more (master local[2], the jars, Delta's
  extension and catalog; Spark's defaults for the rest: driver memory 1g, 200 shuffle
  partitions, Delta snapshot partitions 50, the UI on, a Kafka consumer pool of 64); tuned =
  what a user would set for a 2-core box (TUNED below).

Prints "READY" once the query has run its first trigger (the latency runs start publishing then)
and, with available-now, "DONE <batches> <rows>" and each batch's durationMs at the end. At exit it closes the JVM's stdin
and waits for it, so that the JVM is a reaped child of this process and `/usr/bin/time` counts its
CPU. The jars come from ~/.cache/ferry (make setup-spark-bench): nothing is downloaded. The
session, the Kafka source and the final report (start_session, kafka_stream, finish) serve
spark_merge.py too.
"""

import argparse
import glob
import os
import re
import sys
import time

# The cache rule of src/ferry/testing/cache_dir.h and the setup scripts.
CACHE = os.environ.get("FERRY_CACHE_DIR") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "ferry"
)
JAVA_17 = "/usr/lib/jvm/java-17-openjdk-amd64"

# The settings a user would pick for local[2] on a 2-core box (--settings tuned).
TUNED = {
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.databricks.delta.snapshotPartitions": "2",
    "spark.sql.sources.parallelPartitionDiscovery.parallelism": "2",
    "spark.driver.memory": "1g",
    "spark.ui.enabled": "false",
    # 64 by default: with 128 partitions in one executor the Kafka consumer pool warns "Pool
    # exceeds its soft max size, cleaning up idle objects" every few seconds.
    "spark.kafka.consumer.cache.capacity": "256",
}


def jars():
    """Delta's jars and the Kafka source's, without those the pyspark wheel already ships (the
    same artifact at another version), as tests/interop/conftest.py does."""
    import pyspark

    def artifact(path):
        return re.sub(r"-\d[^-]*\.jar$", "", os.path.basename(path))

    ship = {artifact(p) for p in os.listdir(os.path.join(os.path.dirname(pyspark.__file__), "jars"))}
    found = []
    for d in ("delta-jars", "spark-kafka-jars"):
        paths = sorted(glob.glob(os.path.join(CACHE, d, "*.jar")))
        if not paths:
            sys.exit(f"spark_ingest: no jars in {os.path.join(CACHE, d)}: run `make setup-spark-bench`")
        found += [p for p in paths if artifact(p) not in ship]
    return found


def start_session(app_name, scratch, settings, tuned_extra=None):
    """The local[2] session of both jobs (this one and spark_merge.py): the jars, Delta's
    extension and catalog, loopback only, scratch directories under `scratch`; with settings
    "tuned", TUNED and then `tuned_extra`. Returns the session and its JVM (a child process)."""
    if not os.environ.get("JAVA_HOME") and os.path.isdir(JAVA_17):
        os.environ["JAVA_HOME"] = JAVA_17
    from pyspark.sql import SparkSession

    b = (SparkSession.builder.master("local[2]").appName(app_name)
         .config("spark.jars", ",".join(jars()))
         .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
         .config("spark.sql.catalog.spark_catalog",
                 "org.apache.spark.sql.delta.catalog.DeltaCatalog")
         .config("spark.sql.session.timeZone", "UTC")
         .config("spark.driver.host", "127.0.0.1")
         .config("spark.driver.bindAddress", "127.0.0.1")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.local.dir", os.path.join(scratch, "local"))
         .config("spark.sql.warehouse.dir", os.path.join(scratch, "warehouse"))
         .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={scratch}"))
    if settings == "tuned":
        for k, v in {**TUNED, **(tuned_extra or {})}.items():
            b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark, spark.sparkContext._gateway.proc


def kafka_stream(spark, brokers, topic, max_offsets=None):
    """The topic from its earliest offset through Spark's `kafka` source, failing on data loss;
    at most `max_offsets` messages a trigger when given."""
    r = (spark.readStream.format("kafka")
         .option("kafka.bootstrap.servers", brokers)
         .option("subscribe", topic)
         .option("startingOffsets", "earliest")
         .option("failOnDataLoss", "true"))
    if max_offsets is not None:
        r = r.option("maxOffsetsPerTrigger", str(max_offsets))
    return r.load()


def finish(spark, jvm, query):
    """After the query ended: "DONE <batches> <rows>" and each batch's durationMs (where its time
    went, in ms: addBatch is reading, decoding, writing), then the session stopped and the JVM
    waited for."""
    progress = query.recentProgress
    print(f"DONE {len(progress)} {sum(p['numInputRows'] for p in progress)}", flush=True)
    for p in progress:
        print(f"BATCH {p['batchId']} rows {p['numInputRows']} durationMs {p['durationMs']}",
              flush=True)
    spark.stop()
    # The JVM exits when its stdin closes; waiting for it makes its CPU time ours.
    if jvm is not None:
        jvm.stdin.close()
        jvm.wait()


def job_arguments():
    """The arguments both jobs take: the Kafka source, the table, Spark's checkpoint and scratch
    directories."""
    ap = argparse.ArgumentParser()
    for name in ("--brokers", "--topic", "--table", "--checkpoint", "--scratch"):
        ap.add_argument(name, required=True)
    return ap


def main():
    ap = job_arguments()
    ap.add_argument("--shape", choices=["nine", "latency"], default="nine")
    ap.add_argument("--trigger", choices=["available-now", "default", "1s"], default="available-now")
    ap.add_argument("--settings", choices=["default", "tuned"], default="default")
    args = ap.parse_args()

    spark, jvm = start_session("ferry-bench-spark", args.scratch, args.settings)
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    source = kafka_stream(spark, args.brokers, args.topic)
    if args.shape == "nine":
        schema = T.StructType([
            T.StructField("id", T.LongType()),
            T.StructField("qty", T.IntegerType()),
            T.StructField("price", T.DoubleType()),
            T.StructField("code", T.StringType()),
            T.StructField("city", T.StringType()),
            T.StructField("body", T.StringType()),
            T.StructField("dateTime", T.StringType()),
            T.StructField("day", T.DateType()),
            T.StructField("note", T.StringType()),
        ])
        rows = (source.select(F.from_json(F.col("value").cast("string"), schema).alias("r"),
                              F.col("partition").alias("_partition"),
                              F.col("offset").alias("_offset"))
                .select("r.*", "_partition", "_offset")
                .withColumn("date_only",
                            F.from_unixtime(F.unix_timestamp(F.col("dateTime"),
                                                             "MM/dd/yyyy - HH:mm:ss Z"),
                                            "MM/dd/yyyy")))
    else:
        schema = T.StructType([T.StructField("id", T.LongType()),
                               T.StructField("sent", T.TimestampType())])
        rows = (source.select(F.from_json(F.col("value").cast("string"), schema,
                                          {"timestampFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSSX"})
                              .alias("r"))
                .select("r.*"))

    w = rows.writeStream.format("delta").option("checkpointLocation", args.checkpoint)
    if args.trigger == "available-now":
        w = w.trigger(availableNow=True)
    elif args.trigger == "1s":
        w = w.trigger(processingTime="1 second")
    q = w.start(args.table)
    while q.isActive and q.lastProgress is None:
        time.sleep(0.1)
    print("READY", flush=True)
    q.awaitTermination()
    finish(spark, jvm, q)


if __name__ == "__main__":
    main()
