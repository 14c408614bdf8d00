"""A PyIceberg round trip (namespace, table, append, scan, drop) against an
Iceberg REST catalog; checks that the client properties reach the object
store. Usage: pyiceberg_check.py URI WAREHOUSE NAMESPACE, with catalog
properties as key=value lines in the CLIENT_PROPS environment variable.
Prints one line per step and 'N passed, N failed'.
"""

import os
import sys

import pyarrow as pa
from pyiceberg.catalog.rest import RestCatalog


def main():
    uri, warehouse, ns = sys.argv[1:4]
    props = {"uri": uri}
    if warehouse:
        props["warehouse"] = warehouse
    for line in os.environ.get("CLIENT_PROPS", "").splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            props[k.strip()] = v.strip()
    passed = failed = 0

    def step(name, fn):
        nonlocal passed, failed
        try:
            out = fn()
            passed += 1
            print(f"  ok   {name}{'' if out is None else ': ' + str(out).splitlines()[0]}")
            return out
        except Exception as e:  # report every failure, go on
            failed += 1
            print(f"  FAIL {name}: {type(e).__name__}: {str(e)[:400]}")
            return None

    cat = step("connect", lambda: RestCatalog("nessie", **props))
    if cat is None:
        print(f"{passed} passed, {failed} failed")
        return 1
    print(f"  (client properties after /v1/config: uri={cat.properties.get('uri')} "
          f"prefix={cat.properties.get('prefix')})")
    data = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "data": pa.array(["a", "b", "c"])})
    step("create namespace", lambda: cat.create_namespace(ns))
    tbl = step("create table", lambda: cat.create_table(f"{ns}.t", schema=data.schema))
    if tbl is not None:
        step("append 3 rows", lambda: tbl.append(data))
        step("append 3 rows again", lambda: tbl.append(data))
        step("scan", lambda: cat.load_table(f"{ns}.t").scan().to_arrow().num_rows)
        step("snapshots", lambda: len(cat.load_table(f"{ns}.t").snapshots()))
        step("list tables", lambda: cat.list_tables(ns))
        step("drop table", lambda: cat.drop_table(f"{ns}.t"))
    step("drop namespace", lambda: cat.drop_namespace(ns))
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
