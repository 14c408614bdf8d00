"""PyIceberg, for test_spark.py, which runs in the Spark virtualenv (pyspark,
no s3fs): run with the storage client's python (client-requirements.txt) and
the same STORAGE_* environment, it prints one JSON answer.

  pyiceberg_peer.py keys PREFIX          the bucket's keys under PREFIX, seen
                                         from outside with the admin key
  pyiceberg_peer.py read NS TABLE WHO    the table's ids, sorted, read by WHO
                                         through remote signing
  pyiceberg_peer.py append NS TABLE A B  the writer appends ids A..B-1
"""

import json
import sys

import pyarrow as pa

# The helpers of the PyIceberg suite: the client with no keys and the
# bucket seen from outside (its s3fs instance-cache workaround included).
from test_remote_signing import bucket_keys, client


def main(cmd, *args):
    if cmd == "keys":
        return sorted(bucket_keys(args[0]))
    if cmd == "read":
        ns, name, who = args
        got = client(who).load_table((ns, name)).scan().to_arrow()
        return sorted(got.column("id").to_pylist())
    if cmd == "append":
        ns, name, a, b = args
        tbl = client("writer").load_table((ns, name))
        ids = range(int(a), int(b))
        tbl.append(pa.Table.from_pylist([{"id": i, "name": f"py{i}"} for i in ids], schema=tbl.schema().as_arrow()))
        return list(ids)
    raise SystemExit(f"unknown command {cmd}")


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:])))
