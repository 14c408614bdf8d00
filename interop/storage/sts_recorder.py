"""A recording pass-through in front of moto's STS, for the vended-credentials
suites (run.sh: the gateway's sts_endpoint, $LAKEGATE_STS_ENDPOINT).

    python sts_recorder.py PORT MOTO_URL RECORD_FILE

Every request is forwarded to MOTO_URL unchanged, Host header included, so
the gateway's SigV4 signature (which covers the host) still verifies at
moto; each AssumeRole's RoleSessionName, RoleArn, DurationSeconds and
Policy (the session policy, not a secret) are appended to RECORD_FILE as one
JSON line. moto 5.2.6 does not enforce session policies, so this record is
how the suites check that a reader's vended keys are read-only
(vended.py). Nothing else is recorded: not the signature, not the keys
STS answers with.
"""

import http.client
import json
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MOTO = urllib.parse.urlsplit(sys.argv[2])
RECORD = sys.argv[3]
LOCK = threading.Lock()


class Forward(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        form = urllib.parse.parse_qs(body.decode("utf-8", "replace"))
        if form.get("Action") == ["AssumeRole"]:
            rec = {k: form[k][0] for k in ("RoleSessionName", "RoleArn", "DurationSeconds", "Policy") if k in form}
            with LOCK, open(RECORD, "a") as f:
                f.write(json.dumps(rec) + "\n")
        conn = http.client.HTTPConnection(MOTO.hostname, MOTO.port, timeout=60)
        conn.putrequest("POST", self.path, skip_host=True, skip_accept_encoding=True)
        for k, v in self.headers.items():
            conn.putheader(k, v)
        conn.endheaders(body)
        resp = conn.getresponse()
        data = resp.read()
        self.send_response_only(resp.status, resp.reason)
        for k, v in resp.getheaders():
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        conn.close()

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Forward).serve_forever()
