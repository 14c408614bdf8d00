"""A logging reverse proxy for the Unity Catalog connector's HTTP calls.

    python ucproxy.py LISTEN_PORT UPSTREAM_URL LOG.jsonl

Forwards every request to UPSTREAM_URL (scheme://host:port, the path is
kept) and appends one JSON object per exchange to LOG.jsonl: seq, time,
label, method, path, query, request headers of interest, request body,
status, response body (bodies over 64 KiB are cut, with their length).

`POST /__mark__` with a text body (not forwarded) sets the label written
on the following exchanges, so a test or a trace script can say which
statement the calls belong to. Standard library only.
"""

import http.client
import http.server
import json
import sys
import threading
import time
import urllib.parse

MAX_BODY = 64 * 1024
KEEP_HEADERS = ("content-type", "authorization", "user-agent", "x-request-id")


def body_text(raw):
    if raw is None:
        return None
    text = raw[:MAX_BODY].decode("utf-8", "replace")
    if len(raw) > MAX_BODY:
        text += f"... [{len(raw)} bytes, cut]"
    return text


class State:
    def __init__(self, upstream, log_path):
        u = urllib.parse.urlsplit(upstream)
        self.host, self.port = u.hostname, u.port or 80
        self.log = open(log_path, "a", buffering=1, encoding="utf-8")
        self.lock = threading.Lock()
        self.seq = 0
        self.label = ""

    def write(self, rec):
        with self.lock:
            self.seq += 1
            rec = {"seq": self.seq, "label": self.label, **rec}
            self.log.write(json.dumps(rec, ensure_ascii=False) + "\n")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None  # set in main

    def log_message(self, fmt, *args):  # quiet: the JSON log is the record
        pass

    def _read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            return self.rfile.read(n)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        return b""

    def _handle(self):
        st = self.state
        body = self._read_body()
        if self.path == "/__mark__":
            with st.lock:
                st.label = body.decode("utf-8", "replace").strip()
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        split = urllib.parse.urlsplit(self.path)
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in ("host", "content-length", "transfer-encoding", "connection")}
        t0 = time.time()
        status, resp, rheaders, err = 502, b"", [], None
        try:
            conn = http.client.HTTPConnection(st.host, st.port, timeout=300)
            conn.request(self.command, self.path, body=body if body or self.command in ("POST", "PUT", "PATCH") else None,
                         headers=headers)
            r = conn.getresponse()
            status, resp = r.status, r.read()
            rheaders = [(k, v) for k, v in r.getheaders()
                        if k.lower() not in ("content-length", "transfer-encoding", "connection")]
            conn.close()
        except Exception as e:  # noqa: BLE001  (recorded and answered 502)
            err = repr(e)
            resp = json.dumps({"error": {"code": 502, "message": f"proxy: {err}"}}).encode()
        st.write({
            "time": round(t0, 3),
            "ms": round((time.time() - t0) * 1000, 1),
            "method": self.command,
            "path": split.path,
            "query": split.query,
            "headers": {k: v for k, v in headers.items() if k.lower() in KEEP_HEADERS},
            "request": body_text(body) if body else None,
            "status": status,
            "response": body_text(resp),
            **({"proxy_error": err} if err else {}),
        })
        self.send_response(status)
        for k, v in rheaders:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(resp)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(resp)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _handle


def main():
    port, upstream, log_path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    Handler.state = State(upstream, log_path)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    srv.daemon_threads = True
    srv.serve_forever()


if __name__ == "__main__":
    main()
