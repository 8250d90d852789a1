"""Fixtures of the interop suite (docs/interop.md): the ferry binary under test, a mock Kafka
cluster per test module, a nats-server per test module that uses one, and one Spark session for
the suite with Delta Lake's jars from the cache tools/setup_interop.sh filled (nothing is
downloaded while the tests run).

The ferry binary comes from `--ferry PATH` or the FERRY_BINARY environment variable (CTest passes
the dev tree's); without one the suite fails saying so.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from ferry_harness import NatsServer

# Every timestamp the tests compare is UTC: Spark converts TIMESTAMP values to the Python
# process's zone when it collects them, and its session zone is set to UTC below.
os.environ["TZ"] = "UTC"
time.tzset()
# Spark's driver binds to loopback only (it would pick the first interface's address otherwise).
os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"

# The cache rule of src/ferry/testing/cache_dir.h and the setup scripts.
CACHE = Path(
    os.environ.get("FERRY_CACHE_DIR")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ferry"
)
DELTA_JARS = CACHE / "delta-jars"
JAVA_17 = "/usr/lib/jvm/java-17-openjdk-amd64"


def pytest_addoption(parser):
    parser.addoption("--ferry", default=os.environ.get("FERRY_BINARY"),
                     help="the ferry binary under test (default: $FERRY_BINARY)")


@pytest.fixture(scope="session")
def ferry_binary(request) -> str:
    path = request.config.getoption("--ferry")
    if not path:
        pytest.fail("no ferry binary: pass --ferry PATH or set FERRY_BINARY", pytrace=False)
    if not os.access(path, os.X_OK):
        pytest.fail(f"ferry binary {path} is missing or not executable", pytrace=False)
    return os.path.abspath(path)


@pytest.fixture
def workdir(request):
    """A scratch directory for one test, removed afterwards (kept with FERRY_INTEROP_KEEP=1)."""
    d = Path(tempfile.mkdtemp(prefix=f"ferry-interop-{request.node.name[:40]}-"))
    yield d
    if os.environ.get("FERRY_INTEROP_KEEP") != "1":
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def nats(tmp_path_factory):
    """A JetStream nats-server (ferry_harness.NatsServer) for each test module that asks for one,
    stopped after the module."""
    work = tmp_path_factory.mktemp("nats")
    server = NatsServer(work / "store", work / "nats-server.log")
    yield server
    server.close()


def _delta_jars() -> list[str]:
    """Delta's jars with the ones Spark already ships left out (the same artifact at another
    version, such as jackson or hadoop-client): Spark's own stay authoritative, as with
    `--packages`, where they would be shadowed by Spark's all the same."""
    import pyspark

    def artifact(path):
        return re.sub(r"-\d[^-]*\.jar$", "", os.path.basename(path))

    spark_jars = {artifact(p) for p in os.listdir(os.path.join(os.path.dirname(pyspark.__file__),
                                                               "jars"))}
    jars = [p for p in sorted(glob.glob(str(DELTA_JARS / "*.jar"))) if artifact(p) not in spark_jars]
    if not any(os.path.basename(p).startswith("delta-spark_") for p in jars):
        pytest.fail(f"Delta's jars are missing from {DELTA_JARS}: run `make setup-interop`",
                    pytrace=False)
    return jars


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """One local Spark session with Delta for the whole suite (a JVM start and Spark's first
    Delta query cost ~10-20 s on an idle machine, a minute or more under load: once, not once per
    module). A test that changes a session setting restores it."""
    if not os.environ.get("JAVA_HOME") and os.path.isdir(JAVA_17):
        os.environ["JAVA_HOME"] = JAVA_17
    from pyspark.sql import SparkSession

    scratch = tmp_path_factory.mktemp("spark")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("ferry-interop")
        .config("spark.jars", ",".join(_delta_jars()))
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog",
                "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        # Delta replays the log with this many tasks (50 by default): small tables, 2 cores.
        .config("spark.databricks.delta.snapshotPartitions", "2")
        # VACUUM lists the table's files with this many tasks (10,000 by default).
        .config("spark.sql.sources.parallelPartitionDiscovery.parallelism", "2")
        # VACUUM ... RETAIN 0 HOURS DRY RUN, to list the files Spark would delete.
        .config("spark.databricks.delta.retentionDurationCheck.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.warehouse.dir", str(scratch / "warehouse"))
        .config("spark.local.dir", str(scratch / "local"))
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={scratch}")
        .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
