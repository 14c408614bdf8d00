#!/usr/bin/env python3
"""chdb_run.py: ClickHouse (the `chdb` package, ClickHouse run in-process)
running SQL against a REST catalog through its DataLakeCatalog database
engine, for test_engines.py.

Reads one JSON object on stdin:

  {"uri": "http://127.0.0.1:PORT", "warehouse": "local",
   "credential": "id:secret" (optional: OAuth2 client credentials),
   "statements": ["SELECT ...", ...]}

and prints a JSON list with each statement's rows (a list of objects, from
ClickHouse's JSONEachRow). The database is `lg`; a table is `lg.\\`ns.table\\``.

Run it with the catalog's data folder as the working directory: ClickHouse
reads and writes local Iceberg files only inside its user_files_path, which
clickhouse-local (and so chdb) takes as the working directory, so ClickHouse
reaches no file outside the warehouses. A process per call: chdb holds one
session per process.
"""

import json
import sys

from chdb import session


def database(cfg):
    """The DataLakeCatalog database statement. vended_credentials=false: a
    local warehouse has no credentials to vend, and with it on ClickHouse
    asks for S3 ones."""
    settings = [
        "catalog_type = 'rest'",
        f"warehouse = '{cfg['warehouse']}'",
        "vended_credentials = false",
    ]
    if cfg.get("credential"):
        settings += [
            f"catalog_credential = '{cfg['credential']}'",
            f"oauth_server_uri = '{cfg['uri']}/v1/oauth/tokens'",
        ]
    return f"CREATE DATABASE lg ENGINE = DataLakeCatalog('{cfg['uri']}/v1') SETTINGS {', '.join(settings)}"


def main():
    cfg = json.load(sys.stdin)
    s = session.Session(":memory:")
    # The catalog database and Iceberg writes are beta in ClickHouse 26.9.
    # Int64 as JSON numbers (JSONEachRow quotes them by default).
    for q in ("SET allow_database_iceberg = 1", "SET allow_insert_into_iceberg = 1",
              "SET output_format_json_quote_64bit_integers = 0", database(cfg)):
        s.query(q)
    out = []
    for q in cfg["statements"]:
        text = s.query(q, "JSONEachRow").data()
        out.append([json.loads(line) for line in text.splitlines() if line.strip()])
    print(json.dumps(out))


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # chdb raises its own types; the message is what the test shows
        print(f"clickhouse: {e}", file=sys.stderr)
        sys.exit(1)
