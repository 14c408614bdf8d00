"""DuckDB with the extensions this repository's suites use (httpfs, avro,
iceberg), loaded from the duckdb-extension-* wheels of the suite's
virtualenv: autoinstall and autoload off, so nothing is downloaded at run
time. Shared by interop/engines and interop/storage."""

import glob
import os


def connect():
    import duckdb

    con = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
    for ext in ("httpfs", "avro", "iceberg"):
        mod = __import__(f"duckdb_extension_{ext}")
        path = glob.glob(os.path.join(os.path.dirname(mod.__file__), "extensions", f"v{duckdb.__version__}",
                                      f"{ext}.duckdb_extension"))
        assert path, f"duckdb-extension-{ext} carries no extension for DuckDB {duckdb.__version__}"
        con.execute(f"LOAD '{path[0]}'")
    return con
