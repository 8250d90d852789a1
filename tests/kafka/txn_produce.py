#!/usr/bin/env python3
"""txn_produce.py: the independent transactional producer of the Kafka tests.

Confluent's Python client (confluent-kafka, pinned by tests/kafka/requirements.txt; it bundles
its own librdkafka) runs a plan of transactions against a real broker, so that ferry reads
commit and abort markers written by a client other than itself:

  txn_produce.py --bootstrap HOST:PORT --topic T --plan "A begin; A send 0 1-5; B begin;
      B send 0 100-104; A commit; B abort"

Steps are separated by ';'. Each names a producer (any word: each gets its own transactional.id)
and one of: `begin`, `send PARTITION FIRST-LAST` (one record per id, value
{"id": N, "payload": "txn <producer>"}, key "k<id>", flushed so that steps of different producers
interleave in the partition's log), `commit`, `abort`. A producer whose transaction is still open
at the end of the plan leaves it open: the script then prints "ready" on stdout and waits, the
transaction holding the partitions' last stable offset, until SIGTERM (it then aborts the open
transactions and exits 0), SIGKILL, or the broker's transaction timeout (--txn-timeout-ms,
default 120000). Otherwise it prints "ready" and exits 0. Any failure exits 1 with a message on
stderr.
"""

import argparse
import json
import signal
import sys
import time
import uuid

from confluent_kafka import Producer


def parse_range(text):
    first, _, last = text.partition("-")
    return range(int(first), int(last or first) + 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--txn-timeout-ms", type=int, default=120000)
    args = ap.parse_args()

    run = uuid.uuid4().hex[:8]
    producers = {}
    open_txn = set()

    def producer(name):
        if name not in producers:
            p = Producer({
                "bootstrap.servers": args.bootstrap,
                "transactional.id": f"ferry-test-{name}-{run}",
                "transaction.timeout.ms": args.txn_timeout_ms,
                "linger.ms": 0,
            })
            p.init_transactions(30)
            producers[name] = p
        return producers[name]

    for step in filter(None, (s.strip() for s in args.plan.split(";"))):
        words = step.split()
        name, op = words[0], words[1]
        p = producer(name)
        if op == "begin":
            p.begin_transaction()
            open_txn.add(name)
        elif op == "send":
            partition = int(words[2])
            for i in parse_range(words[3]):
                value = json.dumps({"id": i, "payload": f"txn {name}"})
                p.produce(args.topic, value=value, key=f"k{i}", partition=partition)
            if p.flush(30) != 0:
                sys.exit(f"txn_produce: {step}: records not delivered")
        elif op == "commit":
            p.commit_transaction(30)
            open_txn.discard(name)
        elif op == "abort":
            p.abort_transaction(30)
            open_txn.discard(name)
        else:
            sys.exit(f"txn_produce: unknown step '{step}'")

    terminated = []
    signal.signal(signal.SIGTERM, lambda *_: terminated.append(True))
    print("ready", flush=True)
    # Keep the open transactions (and their producers) alive until SIGTERM, then abort them.
    while open_txn and not terminated:
        time.sleep(0.1)
    for name in sorted(open_txn):
        producers[name].abort_transaction(30)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # a KafkaException or a bad plan: say it, exit 1
        print(f"txn_produce: {e}", file=sys.stderr)
        sys.exit(1)
