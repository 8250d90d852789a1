"""The change stream of the upsert benchmark (tools/bench_upsert.sh, docs/BENCHMARKS.md "Upserts"),
produced to a Kafka topic: the same kinds of change as the upsert torture's generator
(tests/fault/change_stream.h; this is its Python twin, by the same rules, not byte for byte the
same stream): updates, deletes (tombstones: an empty value), re-inserts of deleted keys, inserts
of new keys and deletes of absent keys, over KEYS keys of which the first HOT_KEYS fraction are
hot and receive HOT_SHARE of the changes. Deterministic by seed.

  upsert_changes.py --brokers B --topic T --keys 10000000 --changes 1000000 \
                    [--hot-keys 0.1] [--hot-share 0.9] [--seed 1] [--start-live]

--start-live: keys 1..KEYS are live at the start (the table was loaded with them), so the first
change to a key is an update or a delete rather than an insert.

Messages: key {"id": N}, value {"id": N, "v": "c<i>-x...", "n": i} or empty. Prints one JSON line
with the counts and the number of live keys at the end (the table's expected row count).
"""

import argparse
import json
import random
import sys
import time

from confluent_kafka import Producer

NEVER, LIVE, DELETED = 0, 1, 2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--brokers", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--keys", type=int, required=True)
    ap.add_argument("--changes", type=int, required=True)
    ap.add_argument("--hot-keys", type=float, default=0.1)
    ap.add_argument("--hot-share", type=float, default=0.9)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start-live", action="store_true")
    a = ap.parse_args()

    rng = random.Random(a.seed)
    state = bytearray([LIVE if a.start_live else NEVER]) * (a.keys + 1)
    state[0] = NEVER  # ids start at 1
    hot = max(1, int(a.keys * a.hot_keys))
    counts = {"inserts": 0, "updates": 0, "deletes": 0, "reinserts": 0, "void_deletes": 0}
    p = Producer({"bootstrap.servers": a.brokers, "linger.ms": 20, "batch.size": 1 << 20,
                  "compression.type": "lz4", "enable.idempotence": True,
                  "queue.buffering.max.messages": 1000000})
    t0 = time.time()
    for i in range(a.changes):
        key = rng.randint(1, hot) if rng.random() < a.hot_share else rng.randint(1, a.keys)
        s = state[key]
        r = rng.random()
        if s == NEVER:
            upsert = r < 0.9
            counts["inserts" if upsert else "void_deletes"] += 1
        elif s == LIVE:
            upsert = r < 0.75
            counts["updates" if upsert else "deletes"] += 1
        else:
            upsert = r < 0.8
            counts["reinserts" if upsert else "void_deletes"] += 1
        if upsert:
            value = '{"id": %d, "v": "c%d-%s", "n": %d}' % (key, i, "x" * (i % 23), i)
            state[key] = LIVE
        else:
            value = b""
            if s == LIVE:
                state[key] = DELETED
        while True:
            try:
                p.produce(a.topic, value=value, key='{"id": %d}' % key)
                break
            except BufferError:
                p.poll(0.05)
        if i % 10000 == 0:
            p.poll(0)
    left = p.flush(120)
    if left:
        sys.exit(f"upsert_changes: {left} messages undelivered")
    live = state.count(LIVE)
    print(json.dumps({"changes": a.changes, "keys": a.keys, "live": live,
                      "seconds": round(time.time() - t0, 1), **counts}), flush=True)


if __name__ == "__main__":
    main()
