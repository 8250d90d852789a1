"""gen_clustered_table.py DIR FILES ROWS_PER_FILE: writes a clustered Delta table for
tools/bench_cluster_memory.sh (docs/delta.md, "Clustered optimize memory").

FILES zstd Parquet files of ROWS_PER_FILE rows each (id BIGINT, k BIGINT spread at random,
v DOUBLE, payload STRING of about 70 compressible bytes), written by pyarrow, and a
_delta_log/00000000000000000000.json that makes the table clustered by k as Spark's
CLUSTER BY leaves it (writer features domainMetadata + clustering, the delta.clustering domain).
None of the files has a clusteringProvider, so `ferry optimize` clusters them all, in one group
while they sum to less than 1 GiB. Run with the interop venv's python (pyarrow).
"""

from __future__ import annotations

import json
import os
import sys
import uuid

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq


def main() -> None:
    out, files, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    os.makedirs(os.path.join(out, "_delta_log"), exist_ok=True)
    schema = {"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": True, "metadata": {}},
        {"name": "k", "type": "long", "nullable": True, "metadata": {}},
        {"name": "v", "type": "double", "nullable": True, "metadata": {}},
        {"name": "payload", "type": "string", "nullable": True, "metadata": {}},
    ]}
    actions = [
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 7,
                      "writerFeatures": ["appendOnly", "invariants", "domainMetadata",
                                         "clustering"]}},
        {"metaData": {"id": str(uuid.uuid4()), "format": {"provider": "parquet", "options": {}},
                      "schemaString": json.dumps(schema), "partitionColumns": [],
                      "configuration": {}, "createdTime": 1700000000000}},
        {"domainMetadata": {"domain": "delta.clustering",
                            "configuration": json.dumps({"clusteringColumns": [["k"]]}),
                            "removed": False}},
    ]
    for f in range(files):
        first = f * rows
        ids = pa.array(range(first, first + rows), pa.int64())
        k = pc.cast(pc.floor(pc.multiply(pc.random(rows), 1e9)), pa.int64())
        v = pc.random(rows)
        payload = pc.binary_join_element_wise(
            "event of customer ", pc.cast(pc.divide(k, 1000), pa.string()),
            " in region eu-west with status delivered", "")
        table = pa.table({"id": ids, "k": k, "v": v, "payload": payload})
        name = f"part-{f:05d}-{uuid.uuid4()}.zstd.parquet"
        path = os.path.join(out, name)
        pq.write_table(table, path, compression="zstd", row_group_size=256 * 1024)
        actions.append({"add": {"path": name, "partitionValues": {},
                                "size": os.path.getsize(path),
                                "modificationTime": 1700000000000, "dataChange": True,
                                "stats": json.dumps({"numRecords": rows})}})
    with open(os.path.join(out, "_delta_log", "00000000000000000000.json"), "w") as log:
        for action in actions:
            log.write(json.dumps(action) + "\n")


if __name__ == "__main__":
    main()
