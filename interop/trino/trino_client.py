"""Trino's client protocol over HTTP, for the interop suites that run
Trino (interop/trino, interop/storage): one statement at a time, its rows,
or its error with the causes Trino gives."""

import time

import requests


class TrinoError(Exception):
    """A query Trino answered with an error: its message, name and type."""

    def __init__(self, sql, error):
        self.error_name = error.get("errorName", "")
        self.error_type = error.get("errorType", "")
        self.message = error.get("message", "")
        cause = error.get("failureInfo", {})
        causes = []
        while cause:
            if cause.get("message") and cause.get("message") != self.message:
                causes.append(f"{cause.get('type', '')}: {cause['message']}")
            cause = cause.get("cause")
        text = f"{self.error_name} ({self.error_type}): {self.message}"
        if causes:
            text += "\n  caused by " + "\n  caused by ".join(causes[:4])
        super().__init__(f"{text}\n  in: {sql}")


class Trino:
    """Trino's client protocol (POST /v1/statement, then follow nextUri)."""

    def __init__(self, uri, user="interop"):
        self.uri = uri
        self.session = requests.Session()
        self.session.headers.update({"X-Trino-User": user, "X-Trino-Source": "lakegate-interop"})

    def _get(self, url):
        for attempt in range(50):
            r = self.session.get(url, timeout=120)
            if r.status_code in (429, 502, 503, 504):
                time.sleep(0.05 * (attempt + 1))
                continue
            r.raise_for_status()
            return r.json()
        r.raise_for_status()

    def query(self, sql, catalog=None, schema=None):
        """The rows of one statement, as lists; raises TrinoError."""
        headers = {}
        if catalog:
            headers["X-Trino-Catalog"] = catalog
        if schema:
            headers["X-Trino-Schema"] = schema
        r = self.session.post(f"{self.uri}/v1/statement", data=sql.encode(), headers=headers, timeout=120)
        r.raise_for_status()
        j = r.json()
        rows = []
        while True:
            rows.extend(j.get("data") or [])
            if j.get("error"):
                raise TrinoError(sql, j["error"])
            if "nextUri" not in j:
                return rows
            j = self._get(j["nextUri"])
