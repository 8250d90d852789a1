"""Makes ferry write Delta tables for the interop suite, the way a user would: the real `ferry`
binary, an embedded mock Kafka cluster (`ferry mock-kafka`, librdkafka's mock speaking the real
protocol on loopback), messages published with `ferry produce kafka` from a template whose values
the test knows, then `ferry run --until-caught-up` on a TOML config.

A test that appends to a table Spark made first creates it with spark_create_table, the DDL a
user would run.

Nothing here reads a table: judging what ferry wrote is left to Spark and delta-rs
(readers.py). The only facts taken from the table's directory are file names (which versions
and checkpoints exist), never their contents.
"""

from __future__ import annotations

import os
import re
import select
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

# One `ferry` command may take this long before the test fails naming it (a wedged process must
# not eat the suite's CTest TIMEOUT silently).
COMMAND_TIMEOUT_S = 120


class FerryError(AssertionError):
    pass


def run_ferry(ferry: str, *args: str, timeout: float = COMMAND_TIMEOUT_S) -> str:
    """Runs `ferry ARGS...`; returns its stdout, or fails with its exit status and output."""
    argv = [ferry, *args]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise FerryError(f"`{' '.join(argv)}` still running after {timeout} s; stderr:\n"
                         f"{e.stderr}") from None
    if done.returncode != 0:
        raise FerryError(f"`{' '.join(argv)}` exited {done.returncode}\nstdout:\n{done.stdout}\n"
                         f"stderr:\n{done.stderr}")
    return done.stdout


def end_child(proc: subprocess.Popen, stop=None, timeout: float = 10) -> None:
    """Ends a child unless it has exited: `stop(proc)` (close its stdin, or SIGTERM; none: let it
    finish), then SIGKILL once `timeout` s pass. The child is always reaped."""
    if proc.poll() is None:
        try:
            if stop is not None:
                stop(proc)
            proc.wait(timeout=timeout)
        except (subprocess.TimeoutExpired, OSError):
            proc.kill()
            proc.wait()


def kafka_json_toml(brokers: str, topic: str, max_rows: int, max_latency: str) -> str:
    """The [pipeline.kafka], [pipeline.decode] and [pipeline.batch] tables of a pipeline that
    reads the JSON messages of `topic` from the earliest offset, its partitions assigned manually
    (as on the mock cluster)."""
    return f"""
[pipeline.kafka]
brokers = "{brokers}"
topics = ["{topic}"]
assignment = "manual"
start = "earliest"

[pipeline.decode]
format = "json"

[pipeline.batch]
max_rows = {max_rows}
max_latency = "{max_latency}"
"""


def spark_create_table(spark, table: Path, columns: str, *,
                       properties: dict[str, str] | None = None,
                       constraints: dict[str, str] | None = None, rows: str = "") -> None:
    """Spark creates the Delta table at `table`, as a user would before pointing ferry at it:
    `CREATE TABLE delta.`table` (columns) USING DELTA TBLPROPERTIES (properties)`, then one
    `ALTER TABLE ... ADD CONSTRAINT name CHECK (expression)` per entry of `constraints`, then,
    unless `rows` is empty, `INSERT INTO delta.`table` rows` (a column list and VALUES, or
    VALUES alone)."""
    target = f"delta.`{table}`"
    ddl = f"CREATE TABLE {target} ({columns}) USING DELTA"
    if properties:
        ddl += " TBLPROPERTIES (" + ", ".join(f"'{k}' = '{v}'" for k, v in properties.items()) + ")"
    spark.sql(ddl)
    for name, expression in (constraints or {}).items():
        spark.sql(f"ALTER TABLE {target} ADD CONSTRAINT {name} CHECK ({expression})")
    if rows:
        spark.sql(f"INSERT INTO {target} {rows}")


class MockKafka:
    """`ferry mock-kafka` in a child process: a one-broker cluster holding `topics`
    (NAME:PARTITIONS). It keeps its state in memory, so it lives as long as the test module;
    closing its stdin stops it (--exit-on-eof), and close() makes sure it is gone."""

    def __init__(self, ferry: str, topics: list[str], log_path: Path):
        argv = [ferry, "mock-kafka", "--brokers", "1", "--exit-on-eof"]
        for t in topics:
            argv += ["--topic", t]
        self._log = open(log_path, "wb")
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._log)
        ready, _, _ = select.select([self.proc.stdout], [], [], 30)
        line = self.proc.stdout.readline().decode().strip() if ready else ""
        if not re.match(r"^127\.0\.0\.1:\d+", line):
            self.close()
            raise FerryError(f"`ferry mock-kafka` printed no bootstrap address ({line!r}); "
                             f"its log: {log_path.read_text(errors='replace')[-2000:]}")
        self.bootstrap = line

    def close(self) -> None:
        end_child(self.proc, lambda p: p.stdin.close())
        self._log.close()


@dataclass
class Pipeline:
    """One [[pipeline]] of a ferry config: a Kafka topic into a table. The Kafka partition and
    offset of each message are stored in `_partition` and `_offset`, declared after `schema`."""

    table: Path
    topic: str
    schema: str
    partition_by: list[str] = field(default_factory=list)
    table_properties: dict[str, str] = field(default_factory=dict)
    schema_evolution: str = "none"
    # [[pipeline.columns]]: (name, Spark SQL expression)
    columns: list[tuple[str, str]] = field(default_factory=list)
    max_rows: int = 100000

    def toml(self, brokers: str) -> str:
        def strings(values):
            return "[" + ", ".join(f'"{v}"' for v in values) + "]"

        props = ", ".join(f'"{k}" = "{v}"' for k, v in self.table_properties.items())
        text = f"""
[log]
level = "warn"

[[pipeline]]
id = "interop"
table = "{self.table}"
schema = "{self.schema}, _partition INT, _offset BIGINT"
schema_evolution = "{self.schema_evolution}"
partition_by = {strings(self.partition_by)}
table_properties = {{ {props} }}
metadata_columns = {{ partition = "_partition", offset = "_offset" }}
on_bad_record = "fail"
""" + kafka_json_toml(brokers, self.topic, self.max_rows, "60s")
        for name, expr in self.columns:
            text += f'\n[[pipeline.columns]]\nname = "{name}"\nexpr = "{expr}"\n'
        return text


class Ferry:
    """The ferry binary and the mock cluster of one test module, and a scratch directory."""

    def __init__(self, binary: str, kafka: MockKafka, workdir: Path):
        self.binary = binary
        self.kafka = kafka
        self.workdir = workdir

    def produce(self, topic: str, template: str, first: int, count: int) -> None:
        """Publishes messages `first` .. `first + count - 1` of `template` ({{seq}} is the id)."""
        run_ferry(self.binary, "produce", "kafka", "--brokers", self.kafka.bootstrap, "--topic",
                  topic, "--template", template, "--start", str(first), "--count", str(count))

    def run_until_caught_up(self, pipeline: Pipeline) -> None:
        config = self.workdir / f"{pipeline.topic}.toml"
        config.write_text(pipeline.toml(self.kafka.bootstrap))
        run_ferry(self.binary, "run", "--config", str(config), "--until-caught-up",
                  "--max-wait", "60s")

    def __call__(self, *args: str) -> str:
        return run_ferry(self.binary, *args)


def log_versions(table: Path) -> list[int]:
    """The commit versions whose JSON files are in the table's _delta_log, in order."""
    return sorted(int(p.name[:20]) for p in (table / "_delta_log").glob("*.json")
                  if re.fullmatch(r"\d{20}\.json", p.name))


def checkpoint_versions(table: Path) -> list[int]:
    """The versions that have a classic (single-file) Parquet checkpoint."""
    return sorted(int(p.name[:20]) for p in (table / "_delta_log").glob("*.checkpoint.parquet"))


def data_files_on_disk(table: Path) -> set[str]:
    """Every Parquet data file under the table, relative to it, outside hidden directories
    (`_delta_log`, ferry's `_ferry`) as Delta readers and VACUUM see them."""
    out = set()
    for root, dirs, files in os.walk(table):
        dirs[:] = [d for d in dirs if not d.startswith(("_", "."))]
        for f in files:
            if f.endswith(".parquet") and not f.startswith(("_", ".")):
                out.add(os.path.relpath(os.path.join(root, f), table))
    return out



class NatsServer:
    """A JetStream nats-server (Debian's, /usr/sbin/nats-server) on a random loopback port with
    its store under `store`; close() stops it. A test module shares one."""

    BINARY = "/usr/sbin/nats-server"

    def __init__(self, store: Path, log_path: Path):
        if not os.access(self.BINARY, os.X_OK):
            raise FerryError(f"{self.BINARY} is missing: install Debian's nats-server "
                             "(`make setup` installs it)")
        self._log_path = log_path
        self._log = open(log_path, "wb")
        # -p -1: a random free port, which the server prints.
        self.proc = subprocess.Popen([self.BINARY, "-js", "-a", "127.0.0.1", "-p", "-1",
                                      "-sd", str(store)], stdin=subprocess.DEVNULL,
                                     stdout=self._log, stderr=subprocess.STDOUT)
        self.url = ""
        for _ in range(300):
            text = log_path.read_text(errors="replace")
            m = re.search(r"Listening for client connections on 127\.0\.0\.1:(\d+)", text)
            if m and "Server is ready" in text:
                self.url = f"nats://127.0.0.1:{m.group(1)}"
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.close()
        raise FerryError(f"nats-server did not start; its log:\n{log_path.read_text()[-2000:]}")

    def close(self) -> None:
        end_child(self.proc, subprocess.Popen.terminate)
        self._log.close()


@dataclass
class JetStreamPipeline:
    """One [[pipeline]] reading one subject of a JetStream stream, JSON messages, into a table
    that may already exist (no `schema`: the table's own is used). The stream sequence of each
    message goes into the column `seq_column` (which the table must hold)."""

    id: str
    table: Path
    stream: str
    subject: str
    seq_column: str = "_seq"
    max_rows: int = 500
    max_latency: str = "500ms"
    # For a table ferry creates: its Spark DDL schema (the sequence column is added) and
    # properties.
    schema: str = ""
    table_properties: dict[str, str] = field(default_factory=dict)

    def toml(self, url: str) -> str:
        props = ", ".join(f'"{k}" = "{v}"' for k, v in self.table_properties.items())
        create = (f'schema = "{self.schema}"\ntable_properties = {{ {props} }}\n'
                  if self.schema else "")
        return f"""
[[pipeline]]
id = "{self.id}"
table = "{self.table}"
{create}metadata_columns = {{ sequence = "{self.seq_column}" }}
on_bad_record = "fail"

[pipeline.jetstream]
servers = "{url}"
stream = "{self.stream}"
subjects = ["{self.subject}"]
start = "all"

[pipeline.decode]
format = "json"

[pipeline.batch]
max_rows = {self.max_rows}
max_latency = "{self.max_latency}"
"""


def jetstream_config(path: Path, url: str, pipelines: list) -> Path:
    path.write_text('[log]\nlevel = "warn"\n' + "".join(p.toml(url) for p in pipelines))
    return path


@dataclass
class KafkaPipeline:
    """One [[pipeline]] reading one Kafka topic (all its partitions, manual assignment, from the
    earliest offset), JSON messages, into a table that already exists (no `schema`: the table's
    own is used). Each message's partition and offset go into `partition_column` and
    `offset_column` (which the table must hold)."""

    id: str
    table: Path
    topic: str
    partition_column: str = "_partition"
    offset_column: str = "_offset"
    max_rows: int = 500
    max_latency: str = "500ms"

    def toml(self, brokers: str) -> str:
        return f"""
[[pipeline]]
id = "{self.id}"
table = "{self.table}"
metadata_columns = {{ partition = "{self.partition_column}", offset = "{self.offset_column}" }}
on_bad_record = "fail"
""" + kafka_json_toml(brokers, self.topic, self.max_rows, self.max_latency)


def kafka_config(path: Path, brokers: str, pipelines: list) -> Path:
    path.write_text('[log]\nlevel = "warn"\n' + "".join(p.toml(brokers) for p in pipelines))
    return path


class FerryProcess:
    """`ferry run --config CONFIG` running in the background (its output in `log_path`), to be
    killed mid-way."""

    def __init__(self, ferry: str, config: Path, log_path: Path, args: tuple = (),
                 failpoints: str = ""):
        self._log = open(log_path, "ab")
        self.log_path = log_path
        env = dict(os.environ)
        if failpoints:
            env["FERRY_FAILPOINTS"] = failpoints  # src/ferry/base/failpoint.h
        self.proc = subprocess.Popen([ferry, "run", "--config", str(config), *args],
                                     stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=subprocess.STDOUT, env=env)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL: no drain, no final commit."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._log.close()

    def wait(self, timeout: float = COMMAND_TIMEOUT_S) -> None:
        """Waits for a run that ends by itself (`--until-caught-up`); fails unless it exits 0."""
        end_child(self.proc, timeout=timeout)
        self._log.close()
        if self.proc.returncode != 0:
            raise FerryError(f"`ferry run` exited {self.proc.returncode}; its log:\n"
                             f"{self.log_path.read_text(errors='replace')[-3000:]}")

    def stop(self) -> int:
        """SIGTERM, then the exit status (killed after 60 s)."""
        end_child(self.proc, subprocess.Popen.terminate, timeout=60)
        self._log.close()
        return self.proc.returncode


def wait_for(what: str, check, timeout: float = 120, proc: "FerryProcess | None" = None):
    """Polls `check()` until it is true; fails naming `what` after `timeout` s (a safety net
    against a wedged process, never a performance threshold) or when `proc` exits."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if proc is not None and not proc.alive():
            raise FerryError(f"ferry exited ({proc.proc.returncode}) while waiting for {what}; "
                             f"its log:\n{proc.log_path.read_text(errors='replace')[-3000:]}")
        if time.monotonic() > deadline:
            raise FerryError(f"still waiting for {what} after {timeout} s")
        time.sleep(0.2)
