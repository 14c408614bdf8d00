"""Shared setup of the Unity Catalog Delta REST API suite (test_conformance.py).

run.sh starts lakegate on interop/uc/Caddyfile and tells the tests where it
is; without these variables every test that needs the gateway skips:

  LAKEGATE_UC_URI        the gateway (Delta API at /api/2.1/unity-catalog/delta/v1,
                         Iceberg REST at /v1, catalog `local`)
  LAKEGATE_UC_WAREHOUSE  the filesystem path of catalog `local`'s warehouse
                         ($LAKEGATE_DATA/local/warehouse); the tests write
                         UniForm metadata files there, as a UniForm writer does

The spec is uc-delta-api.yaml next to this file (a verbatim copy of Unity
Catalog's Delta REST API spec, protocol 1.0). `Spec.check` is the whole
conformance rule for one response: the status must be one the spec lists
for that operation, a body must be the declared content type and validate
against the declared schema (JSON Schema 2020-12 with the `$ref`s resolved
into components, the error responses' schemas included), headers the
response declares must be there, and an error's `code` and `type` must
agree with the HTTP status (DeltaErrorType's x-enum-descriptions say
which status each type is for).

expected-failures.txt lists what lakegate answers wrongly; each entry names
one case, `test_conformance.py::test_conformance[CASE]`, with keys `*`.
conftest marks it xfail(strict=True) (interop/expected_failures.py).
"""

import copy
import json
import os
import re
import sys
import urllib.parse
import uuid

import pytest
import requests
import yaml
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import best_match
from referencing import Registry
from referencing.jsonschema import DRAFT202012

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import expected_failures  # noqa: E402  (interop/expected_failures.py)

URI = os.environ.get("LAKEGATE_UC_URI", "").rstrip("/")
WAREHOUSE = os.environ.get("LAKEGATE_UC_WAREHOUSE", "")
SPEC_PATH = os.path.join(HERE, "uc-delta-api.yaml")
SPEC_URI = "urn:uc-delta-api"
# The spec's servers are .../api/2.1/unity-catalog and its paths start
# with /delta/v1.
UC_BASE = "/api/2.1/unity-catalog"
CATALOG = "local"
NS = "sales"
RUN_ID = uuid.uuid4().hex[:6]
BAD_REQUEST = ("BadRequestException", "InvalidParameterValueException")


def unique(prefix):
    return f"{prefix}_{RUN_ID}_{uuid.uuid4().hex[:6]}"


# --- the spec

class Nonconformance(AssertionError):
    """A response the spec does not allow."""


# Delta primitive type names (delta-table-protocol "Primitive Types"; Spark
# spells the one without zone timestamp_ntz), bare or decimal(p,s).
PRIMITIVE = (r"^(string|long|integer|short|byte|float|double|boolean|binary|date|timestamp"
             r"|timestamp_ntz|void|variant|decimal(\(\s*[0-9]+\s*,\s*[0-9]+\s*\))?)$")

FORMATS = FormatChecker()  # every format jsonschema knows (uuid among them)


@FORMATS.checks("int32")
def _int32(v):
    return not isinstance(v, int) or isinstance(v, bool) or -2**31 <= v < 2**31


@FORMATS.checks("int64")
def _int64(v):
    return not isinstance(v, int) or isinstance(v, bool) or -2**63 <= v < 2**63


def readings(doc):
    """The two places where the schemas, taken literally as JSON Schema, say
    less or other than the spec means (README.md, "How the spec is read"):

    1. `discriminator` (OpenAPI, ignored by JSON Schema): an object whose
       discriminating property names a mapping entry must also validate
       against that entry's schema, and the property must be one of the
       mapping's keys. The mapped schemas' `allOf` base is rewired to the
       base without the dispatch, so nothing recurses.
    2. DeltaDataType is declared `type: object`, but its description (and
       DeltaDecimalType's, DeltaPrimitiveType's, and every example) says a
       primitive type is a bare JSON string on the wire ("long",
       "decimal(10,2)"): a string naming a Delta primitive type is accepted
       too, anything else must be the object form.
    """
    schemas = doc["components"]["schemas"]
    for name in [n for n, s in schemas.items() if "discriminator" in s]:
        s = schemas[name]
        disc = s.pop("discriminator")
        prop, mapping = disc["propertyName"], disc.get("mapping", {})
        base = f"{name}__base"
        schemas[base] = s
        own = {"$ref": f"#/components/schemas/{name}"}
        for target in mapping.values():
            t = schemas[target.rsplit("/", 1)[1]]
            t["allOf"] = [{"$ref": f"#/components/schemas/{base}"} if a == own else a for a in t.get("allOf", [])]
        schemas[name] = {"allOf": [
            {"$ref": f"#/components/schemas/{base}"},
            {"properties": {prop: {"enum": sorted(mapping)}}},
            *({"if": {"properties": {prop: {"const": k}}, "required": [prop]}, "then": {"$ref": v}}
              for k, v in sorted(mapping.items())),
        ]}
    schemas["DeltaDataType"] = {"anyOf": [{"type": "string", "pattern": PRIMITIVE}, schemas["DeltaDataType"]]}
    return doc


def _pointer(*parts):
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


class Spec:
    def __init__(self, path=SPEC_PATH):
        with open(path) as f:
            self.raw = yaml.safe_load(f)
        self.doc = readings(copy.deepcopy(self.raw))
        self.registry = Registry().with_resource(SPEC_URI, DRAFT202012.create_resource(self.doc))
        self.ops = {}  # operationId -> (METHOD, path, operation)
        for path, item in self.doc["paths"].items():
            for method, op in item.items():
                if method in ("get", "put", "post", "delete", "head", "patch"):
                    self.ops[op["operationId"]] = (method.upper(), path, op)
        # "NoSuchTableException: (404) ..." -> {"NoSuchTableException": 404}
        err = self.doc["components"]["schemas"]["DeltaErrorType"]
        self.error_status = {}
        for d in err.get("x-enum-descriptions", []):
            m = re.match(r"\s*(\w+):\s*\((\d{3})\)", d)
            if m:
                self.error_status[m.group(1)] = int(m.group(2))
        self._validators = {}

    def validator(self, pointer):
        if pointer not in self._validators:
            self._validators[pointer] = Draft202012Validator(
                {"$ref": f"{SPEC_URI}#{pointer}"}, registry=self.registry, format_checker=FORMATS)
        return self._validators[pointer]

    def schema_errors(self, pointer, instance):
        errs = sorted(self.validator(pointer).iter_errors(instance), key=lambda e: list(map(str, e.absolute_path)))
        # best_match descends into anyOf/allOf branches to the most telling error.
        errs = [best_match([e]) for e in errs]
        return [f"at /{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in errs]

    def _deref(self, obj, pointer):
        """Follows a local $ref (responses, requestBodies) to its target."""
        while isinstance(obj, dict) and "$ref" in obj:
            ref = obj["$ref"]
            assert ref.startswith("#/"), ref
            pointer = ref[1:]
            obj = self.doc
            for part in ref[2:].split("/"):
                obj = obj[part.replace("~1", "/").replace("~0", "~")]
        return obj, pointer

    def statuses(self, op_id):
        return list(self.ops[op_id][2]["responses"])

    def request_errors(self, op_id, body):
        """Schema errors of a request body (the suite checks its own valid requests)."""
        method, path, op = self.ops[op_id]
        rb, ptr = self._deref(op["requestBody"], _pointer("paths", path, method.lower(), "requestBody"))
        return self.schema_errors(ptr + _pointer("content", "application/json", "schema"), body)

    def check(self, op_id, resp):
        """Checks one response of operation op_id; returns its JSON body (or None)."""
        method, path, op = self.ops[op_id]
        status = str(resp.status_code)
        listed = op["responses"]
        text = resp.text[:400] if resp.request.method != "HEAD" else ""
        if status == "501" and status not in listed and "400" in listed:
            # The spec's error model has NotImplementedException (501: "the
            # requested functionality is not supported by the server"),
            # though no operation lists 501: accept it in the same error
            # envelope as the operation's 400.
            listed = {**listed, "501": listed["400"]}
            if (resp.json().get("error") or {}).get("type") != "NotImplementedException":
                raise Nonconformance(f"{op_id} answered 501 with another type than NotImplementedException: {text}")
        if status not in listed and "default" not in listed:
            raise Nonconformance(f"{op_id} answered {status}, which the spec does not list for it "
                                 f"(it lists {', '.join(listed)}): {text}")
        key = status if status in listed else "default"
        r, ptr = self._deref(listed[key], _pointer("paths", path, method.lower(), "responses", key))
        for name, h in (r.get("headers") or {}).items():
            h, hptr = self._deref(h, ptr + _pointer("headers", name))
            if name not in resp.headers:
                raise Nonconformance(f"{op_id} {status}: header {name}, which the spec declares, is missing")
            if "schema" in h:
                errs = self.schema_errors(hptr + "/schema", resp.headers[name])
                if errs:
                    raise Nonconformance(f"{op_id} {status}: header {name}: {'; '.join(errs)}")
        if resp.request.method == "HEAD":
            if resp.content:
                raise Nonconformance(f"{op_id} {status}: a HEAD answer has a body")
            return None
        content = r.get("content")
        if not content:
            if resp.content:
                raise Nonconformance(f"{op_id} {status}: the spec declares no body, got {text}")
            return None
        ctype = resp.headers.get("Content-Type", "").split(";")[0].strip()
        if ctype not in content:
            raise Nonconformance(f"{op_id} {status}: Content-Type {ctype!r}, the spec declares {list(content)}")
        try:
            body = resp.json()
        except ValueError as e:
            raise Nonconformance(f"{op_id} {status}: the body is not JSON ({e}): {text}") from None
        sptr = ptr + _pointer("content", ctype, "schema")
        schema_name = content[ctype]["schema"].get("$ref", sptr).rsplit("/", 1)[-1]
        errs = self.schema_errors(sptr, body)
        if errs:
            raise Nonconformance(f"{op_id} {status}: the body does not validate against {schema_name}: "
                                 + "; ".join(errs[:6]) + f"; body: {text}")
        if resp.status_code >= 400 and isinstance(body, dict) and isinstance(body.get("error"), dict):
            err = body["error"]
            if err.get("code") != resp.status_code:
                raise Nonconformance(f"{op_id} {status}: error.code is {err.get('code')}, not the HTTP status")
            want = self.error_status.get(err.get("type"))
            if want is not None and want != resp.status_code:
                raise Nonconformance(f"{op_id} {status}: error type {err.get('type')} is the spec's ({want}) "
                                     f"error, sent with {status}")
        return body


SPEC = Spec()


# --- the gateway

class Call:
    """One request of a case; ctx carries what its setup made, for checks."""

    def __init__(self, op, method, path, params=None, body=None, data=None, **ctx):
        self.op, self.method, self.path = op, method, path
        self.params, self.body, self.data, self.ctx = params, body, data, ctx


class UC:
    """The gateway: Delta API calls checked against the spec, and setup helpers."""

    def __init__(self, uri, warehouse):
        self.uri, self.warehouse = uri, warehouse
        self.http = requests.Session()

    # paths
    def delta(self, path):
        return f"{self.uri}{UC_BASE}/delta/v1{path}"

    @staticmethod
    def tables(schema=NS, catalog=CATALOG):
        return f"/catalogs/{catalog}/schemas/{schema}/tables"

    @classmethod
    def table(cls, name, suffix="", schema=NS, catalog=CATALOG):
        return f"{cls.tables(schema, catalog)}/{urllib.parse.quote(name, safe='')}{suffix}"

    def location(self, name):
        return f"file://{self.warehouse}/{NS}/{name}"

    # requests
    def send(self, call):
        kw = {"params": call.params, "timeout": 30}
        if call.data is not None:
            kw["data"], kw["headers"] = call.data, {"Content-Type": "application/json"}
        elif call.body is not None:
            kw["json"] = call.body
        return self.http.request(call.method, self.delta(call.path), **kw)

    def call(self, op, method, path, params=None, body=None, expect=None):
        """A setup or follow-up call: checked against the spec, and against
        expect (a status) when given; returns (response, body)."""
        resp = self.send(Call(op, method, path, params, body))
        got = SPEC.check(op, resp)
        if expect is not None and resp.status_code != expect:
            raise AssertionError(f"setup {op} {method} {path}: expected {expect}, got {resp.status_code}: "
                                 f"{resp.text[:300]}")
        return resp, got

    def iceberg(self, method, path, **kw):
        r = self.http.request(method, f"{self.uri}/v1/{CATALOG}{path}", timeout=30, **kw)
        if r.status_code >= 300:
            raise AssertionError(f"Iceberg REST {method} {path}: {r.status_code} {r.text[:300]}")
        return r.json() if r.content else None

    # setup helpers
    def create_body(self, name, **over):
        body = {
            "name": name,
            "location": self.location(name),
            "table-type": "MANAGED",
            "columns": {"type": "struct", "fields": [
                {"name": "id", "type": "long", "nullable": False, "metadata": {}},
                {"name": "s", "type": "string", "nullable": True, "metadata": {}},
            ]},
            "protocol": {"min-reader-version": 1, "min-writer-version": 2},
            "properties": {},
            "last-commit-timestamp-ms": 1700000000000,
        }
        body.update(over)
        return body

    def delta_table(self, prefix="t", **over):
        """A fresh table made through the Delta API: (name, DeltaLoadTableResponse)."""
        name = unique(prefix)
        _, lt = self.call("createTable", "POST", self.tables(), body=self.create_body(name, **over), expect=200)
        return name, lt

    def iceberg_table(self, prefix="ice"):
        """A fresh table made through Iceberg REST only (no Delta side): (name, LoadTableResult)."""
        name = unique(prefix)
        res = self.iceberg("POST", f"/namespaces/{NS}/tables", json={
            "name": name,
            "schema": {"type": "struct", "schema-id": 0, "fields": [
                {"id": 1, "name": "id", "type": "long", "required": True},
                {"id": 2, "name": "s", "type": "string", "required": False}]},
        })
        return name, res

    def uniform_table(self, prefix="uni", converted=0, table_type="MANAGED"):
        """A UniForm table: an Iceberg table's metadata file (written through
        Iceberg REST, then dropped from the catalog without purge) registered
        with createTable's uniform.iceberg.metadata-location.
        Returns (name, DeltaLoadTableResponse, create request)."""
        src, res = self.iceberg_table(prefix + "_src")
        self.iceberg("DELETE", f"/namespaces/{NS}/tables/{src}", params={"purgeRequested": "false"})
        name = unique(prefix)
        body = self.create_body(name, **{
            "location": res["metadata"]["location"],
            "table-type": table_type,
            "properties": {"delta.universalFormat.enabledFormats": "iceberg"},
            "uniform": {"iceberg": {"metadata-location": res["metadata-location"],
                                    "converted-delta-version": converted,
                                    "converted-delta-timestamp": 1700000000000}},
        })
        _, lt = self.call("createTable", "POST", self.tables(), body=body, expect=200)
        return name, lt, body

    def next_metadata(self, lt, table_uuid=None):
        """Writes the Iceberg metadata file a UniForm writer would write next
        after lt's current one (same table uuid, the current file appended to
        its metadata log) and returns its location. table_uuid replaces the
        uuid, to make metadata of another table."""
        cur = lt["uniform"]["iceberg"]["metadata-location"]
        if not cur.startswith("file://"):
            pytest.skip(f"the metadata file {cur} is not on a local filesystem")
        with open(cur[len("file://"):]) as f:
            md = json.load(f)
        md.setdefault("metadata-log", []).append({"metadata-file": cur, "timestamp-ms": md["last-updated-ms"]})
        md["last-updated-ms"] += 1
        md.setdefault("properties", {})["interop.uc.commit"] = uuid.uuid4().hex
        if table_uuid:
            md["table-uuid"] = table_uuid
        new = f"{md['location']}/metadata/{uuid.uuid4()}.metadata.json"
        if not new.startswith("file://"):
            pytest.skip(f"the table location {md['location']} is not on a local filesystem")
        with open(new[len("file://"):], "w") as f:
            json.dump(md, f)
        return new

    def update(self, name, lt, updates, extra_requirements=(), expect=None):
        body = {"requirements": [{"type": "assert-table-uuid", "uuid": lt["metadata"]["table-uuid"]},
                                 *extra_requirements], "updates": updates}
        return self.call("updateTable", "POST", self.table(name), body=body, expect=expect)


@pytest.fixture(scope="session")
def uc():
    if not URI or not WAREHOUSE:
        pytest.skip("LAKEGATE_UC_URI / LAKEGATE_UC_WAREHOUSE are not set (run.sh did not start lakegate)")
    g = UC(URI, WAREHOUSE)
    r = g.http.post(f"{URI}/v1/{CATALOG}/namespaces", json={"namespace": [NS]}, timeout=30)
    if r.status_code not in (200, 409):
        raise AssertionError(f"creating namespace {NS}: {r.status_code} {r.text[:300]}")
    return g


# --- expected-failures.txt (one entry per case: the key is the test's full name)

def pytest_collection_modifyitems(config, items):
    expected = expected_failures.load(HERE)
    for item in items:
        k = (os.path.basename(str(item.path)), item.name)
        if k in expected:
            _, reason, match = expected[k]
            expected_failures.mark(item, f"{reason[0] if reason else ''} (expected-failures.txt)", match)


# The report hook: only the listed failures are expected (see expected_failures.py).
from expected_failures import pytest_runtest_makereport  # noqa: E402,F401
