package upstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/lakegate/lakegate/upstream/icerest"
)

const (
	okUUID = "9c12d441-03fe-4693-9a96-a0705ddf69c1"
	okMeta = `{"format-version":2,"table-uuid":"` + okUUID + `"}`
)

// The one pass refuses answers readers could take differently, and
// accepts what encoding/json's decode accepted otherwise.
func TestTableAnswerVerdicts(t *testing.T) {
	for name, c := range map[string]struct {
		body string
		ok   bool
	}{
		"minimal":                        {`{"metadata":` + okMeta + `}`, true},
		"escaped key":                    {`{"metadata":{"format\u002dversion":2,"table-uuid":"` + okUUID + `"}}`, true},
		"null optional fields":           {`{"metadata-location":null,"metadata":{"format-version":1,"table-uuid":"` + okUUID + `","location":null,"snapshots":null,"properties":null,"refs":null,"current-snapshot-id":null}}`, true},
		"null items":                     {`{"metadata":{"format-version":3,"table-uuid":"` + okUUID + `","snapshots":[null,{}],"refs":{"main":null},"properties":{"a":null}}}`, true},
		"braced UUID":                    {`{"metadata":{"format-version":2,"table-uuid":"{` + okUUID + `}"}}`, true},
		"unknown fields":                 {`{"x":[1,{"y":2}],"metadata":{"format-version":2,"table-uuid":"` + okUUID + `","z":{}}}`, true},
		"repeated metadata":              {`{"metadata":{"garbage":true},"metadata":` + okMeta + `}`, false},
		"repeated format-version":        {`{"metadata":{"format-version":9,"format-version":2,"table-uuid":"` + okUUID + `"}}`, false},
		"repeated property":              {`{"metadata":{"format-version":2,"table-uuid":"` + okUUID + `","properties":{"a":"1","a":"2"}}}`, false},
		"invalid UTF-8":                  {"{\"metadata\":" + okMeta + ",\"x\":\"\xff\"}", false},
		"byte order mark":                {"\xef\xbb\xbf{\"metadata\":" + okMeta + "}", false},
		"trailing data":                  {`{"metadata":` + okMeta + `}{}`, false},
		"keys differing in case":         {`{"metadata":{"Format-Version":2,"table-uuid":"` + okUUID + `"}}`, false},
		"config in another case":         {`{"metadata":` + okMeta + `,"Config":{"s3.secret-access-key":"x"}}`, false},
		"credentials in another case":    {`{"metadata":` + okMeta + `,"Storage-Credentials":[{"prefix":"s3://b","config":{}}]}`, false},
		"location in another case":       {`{"Metadata-Location":"s3://b/m.json","metadata":` + okMeta + `}`, false},
		"properties in another case":     {`{"metadata":{"format-version":2,"table-uuid":"` + okUUID + `","PROPERTIES":{"a":"b"}}}`, false},
		"long s for s":                   {`{"metadata":{"format-version":2,"table-uuid":"` + okUUID + `","\u017fnapshots":[1]}}`, false},
		"signer config":                  {`{"metadata":` + okMeta + `,"remote-signing-config":{"properties":{"a":"b"},"headers":{"X":["y"]},"Other":1}}`, true},
		"signer config in another case":  {`{"metadata":` + okMeta + `,"Remote-Signing-Config":{"headers":{"X":["y"]}}}`, false},
		"signer headers in another case": {`{"metadata":` + okMeta + `,"remote-signing-config":{"Headers":{"X":["y"]}}}`, false},
		"vendor key in upper case":       {`{"X-Vendor":{},"metadata":{"format-version":2,"table-uuid":"` + okUUID + `","Vendor-Field":1}}`, true},
		"format-version 4":               {`{"metadata":{"format-version":4,"table-uuid":"` + okUUID + `"}}`, false},
		"format-version 2.0":             {`{"metadata":{"format-version":2.0,"table-uuid":"` + okUUID + `"}}`, false},
		"format-version a string":        {`{"metadata":{"format-version":"2","table-uuid":"` + okUUID + `"}}`, false},
		"no table-uuid":                  {`{"metadata":{"format-version":2}}`, false},
		"table-uuid null":                {`{"metadata":{"format-version":2,"table-uuid":null}}`, false},
		"table-uuid a number":            {`{"metadata":{"format-version":2,"table-uuid":1}}`, false},
		"int field a string":             {`{"metadata":{"format-version":2,"table-uuid":"` + okUUID + `","last-column-id":"1"}}`, false},
		"int field a float":              {`{"metadata":{"format-version":2,"table-uuid":"` + okUUID + `","current-snapshot-id":1.5}}`, false},
		"location a number":              {`{"metadata":{"format-version":2,"table-uuid":"` + okUUID + `","location":1}}`, false},
		"list of numbers":                {`{"metadata":{"format-version":2,"table-uuid":"` + okUUID + `","schemas":[1]}}`, false},
		"list an object":                 {`{"metadata":{"format-version":2,"table-uuid":"` + okUUID + `","sort-orders":{}}}`, false},
		"property a number":              {`{"metadata":{"format-version":2,"table-uuid":"` + okUUID + `","properties":{"a":1}}}`, false},
		"ref a string":                   {`{"metadata":{"format-version":2,"table-uuid":"` + okUUID + `","refs":{"main":"x"}}}`, false},
		"metadata null":                  {`{"metadata":null}`, false},
		"metadata-location number":       {`{"metadata-location":1,"metadata":` + okMeta + `}`, false},
		"not an object":                  {`[` + okMeta + `]`, false},
	} {
		_, v := scanTableAnswer([]byte(c.body))
		if v.ok() != c.ok {
			t.Errorf("%s: verdict %v (%v, %v), want ok=%v", name, v.ok(), v.syntax, v.metadata, c.ok)
		}
	}
}

// The pass reads what the later stages need.
func TestTableAnswerRead(t *testing.T) {
	body := `{"metadata-location":"s3://b/m\u002ejson","metadata":{"format-version":2,"table-uuid":"` + okUUID +
		`","properties":{"delta.table-type":"EXTERNAL","k":"v\n"}},"config":{"s3.region":"eu","S3.Session-Token":"x"},"storage-credentials":[]}`
	a, v := readTableAnswer([]byte(body))
	if !v.ok() {
		t.Fatal(v.syntax, v.metadata)
	}
	want := icerest.TableAnswer{MetadataLocation: "s3://b/m.json", HasMetadataLocation: true, HasMetadata: true,
		HasStorageCredentials: true, SecretConfig: true}
	got := *a
	got.Properties = nil
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("read %+v, want %+v", got, want)
	}
	if a.Properties["delta.table-type"] != "EXTERNAL" || a.Properties["k"] != "v\n" || len(a.Properties) != 2 {
		t.Errorf("properties %v", a.Properties)
	}
	if !a.Credentials() || !a.Strippable() {
		t.Error("secret config is credentials")
	}
	for body, vended := range map[string]bool{
		`{"metadata":` + okMeta + `,"storage-credentials":[{"prefix":"s3://b","config":{}}]}`: true,
		`{"metadata":` + okMeta + `,"storage-credentials":null}`:                              false,
		`{"metadata":` + okMeta + `,"storage-credentials":{}}`:                                true,
	} {
		a, _ := readTableAnswer([]byte(body))
		if a.VendedCredentials != vended || !a.HasStorageCredentials {
			t.Errorf("%s: vended %v", body, a.VendedCredentials)
		}
	}
}

// Static signer headers are credentials (one principal's: never cached
// for another, stripped by strip_credentials); any signer setting is
// noted for catalogs whose storage the gateway governs.
func TestTableAnswerSignerSettings(t *testing.T) {
	for body, want := range map[string][2]bool{ // SignerHeaders, SignerSettings
		`{"metadata":` + okMeta + `}`:                                                        {false, false},
		`{"metadata":` + okMeta + `,"config":{"signer.uri":"http://s"}}`:                     {false, true},
		`{"metadata":` + okMeta + `,"config":{"s3.remote-signing-enabled":"true"}}`:          {false, true},
		`{"metadata":` + okMeta + `,"remote-signing-config":{"properties":{"a":"b"}}}`:       {false, true},
		`{"metadata":` + okMeta + `,"remote-signing-config":{"headers":{}}}`:                 {false, true},
		`{"metadata":` + okMeta + `,"remote-signing-config":{"headers":null}}`:               {false, true},
		`{"metadata":` + okMeta + `,"remote-signing-config":{"headers":{"A":["Bearer t"]}}}`: {true, true},
		`{"metadata":` + okMeta + `,"remote-signing-config":{"headers":"Bearer t"}}`:         {true, true},
	} {
		a, v := readTableAnswer([]byte(body))
		if !v.ok() {
			t.Fatalf("%s: %v %v", body, v.syntax, v.metadata)
		}
		if a.SignerHeaders != want[0] || a.SignerSettings != want[1] {
			t.Errorf("%s: headers %v settings %v, want %v", body, a.SignerHeaders, a.SignerSettings, want)
		}
		if a.Credentials() != want[0] || a.Strippable() != want[0] {
			t.Errorf("%s: credentials %v strippable %v, want %v", body, a.Credentials(), a.Strippable(), want[0])
		}
	}
}

// A valid answer's reading is remembered: the same bytes again are not
// scanned, and the same reading is handed out. An invalid one is not
// remembered.
func TestTableAnswerMemo(t *testing.T) {
	body := []byte(`{"metadata-location":"memo","metadata":` + okMeta + `}`)
	first, _ := readTableAnswer(body)
	again, _ := readTableAnswer(append([]byte(nil), body...))
	if first != again {
		t.Error("the same bytes were read again")
	}
	if allocs := testing.AllocsPerRun(100, func() { readTableAnswer(body) }); allocs != 0 {
		t.Errorf("a remembered answer costs %v allocations", allocs)
	}
	other, _ := readTableAnswer([]byte(`{"metadata-location":"memo2","metadata":` + okMeta + `}`))
	if other == first {
		t.Error("other bytes share a reading")
	}
	bad := []byte(`{"metadata":{"format-version":7,"table-uuid":"` + okUUID + `"}}`)
	readTableAnswer(bad)
	if _, v := readTableAnswer(bad); v.ok() {
		t.Error("a refused answer was remembered as valid")
	}
	vended := []byte(`{"metadata":` + okMeta + `,"config":{"s3.secret-access-key":"k"}}`)
	once, _ := readTableAnswer(vended)
	if twice, _ := readTableAnswer(vended); twice == once {
		t.Error("an answer with credentials was remembered")
	}
}

// A remote's checked answer reaches a capture with its reading and its
// own buffer: the cache keeps it without a copy or a second parse.
func TestRemoteHandsAnswerOver(t *testing.T) {
	body := answerOfSize(4 << 10)
	p := proxyPipeline(t, memoryBackend(t, body).URL, false)
	req := httptest.NewRequest(http.MethodGet, "/v1/namespaces/ns/tables/t", nil)
	rec := Capture(func(w http.ResponseWriter, r *http.Request, q icerest.Request) { p.ServeRequest(w, r, q, "alice") }, req, icerest.Request{Route: loadRoute})
	if rec.Status != http.StatusOK || string(rec.Bytes()) != string(body) {
		t.Fatalf("%d %q", rec.Status, rec.Bytes())
	}
	if rec.table == nil || rec.table.MetadataLocation == "" {
		t.Fatal("the reading was not handed over")
	}
	e := newEntry(rec)
	if &e.Body[0] != &rec.Bytes()[0] {
		t.Error("the cache copied a body it could keep")
	}
}

// An answer a capture keeps is read into a buffer of its own; one written
// to a client, into a pooled buffer, and is never the worse for the
// buffer's reuse.
func TestPooledAnswersStayWhole(t *testing.T) {
	p := proxyPipeline(t, memoryBackend(t, answerOfSize(64<<10)).URL, false)
	for i := range 20 {
		rec := httptest.NewRecorder()
		p.Serve(rec, httptest.NewRequest(http.MethodGet, "/v1/namespaces/ns/tables/t", nil), loadRoute, "alice")
		if rec.Code != http.StatusOK || !strings.HasSuffix(rec.Body.String(), `"config":{}}`) {
			t.Fatalf("load %d: %d, %d bytes", i, rec.Code, rec.Body.Len())
		}
	}
}

func TestBodyClasses(t *testing.T) {
	for _, n := range []int{1, minClassSize, minClassSize + 1, 21 << 10, 1 << 20, 10<<20 + 7, maxResponse + 1} {
		c := classFor(n)
		if classSize(c) < n || (c > 0 && classSize(c-1) >= n) {
			t.Errorf("%d: class %d of %d bytes", n, c, classSize(c))
		}
		if n > minClassSize && float64(classSize(c)) > 1.26*float64(n) {
			t.Errorf("%d: class %d of %d bytes wastes more than a quarter", n, c, classSize(c))
		}
	}
	if classFor(maxResponse+1) >= len(bodyPools) {
		t.Error(fmt.Sprint("no pool for the largest answers: ", classFor(maxResponse+1)))
	}
}

// legacyCheck is the check of table metadata before the one pass:
// encoding/json's decode into the fields lakegate checks.
func legacyCheck(body []byte) bool {
	var a struct {
		Metadata *struct {
			FormatVersion     *int                `json:"format-version"`
			TableUUID         *string             `json:"table-uuid"`
			Location          *string             `json:"location"`
			LastUpdatedMs     *int64              `json:"last-updated-ms"`
			LastColumnID      *int64              `json:"last-column-id"`
			Schemas           []struct{}          `json:"schemas"`
			CurrentSchemaID   *int64              `json:"current-schema-id"`
			PartitionSpecs    []struct{}          `json:"partition-specs"`
			DefaultSpecID     *int64              `json:"default-spec-id"`
			SortOrders        []struct{}          `json:"sort-orders"`
			Properties        map[string]string   `json:"properties"`
			CurrentSnapshotID *int64              `json:"current-snapshot-id"`
			Snapshots         []struct{}          `json:"snapshots"`
			SnapshotLog       []struct{}          `json:"snapshot-log"`
			MetadataLog       []struct{}          `json:"metadata-log"`
			Refs              map[string]struct{} `json:"refs"`
		} `json:"metadata"`
	}
	if json.Unmarshal(body, &a) != nil {
		return false
	}
	m := a.Metadata
	if m == nil || m.FormatVersion == nil || *m.FormatVersion < 1 || *m.FormatVersion > 3 || m.TableUUID == nil {
		return false
	}
	_, err := uuid.Parse(*m.TableUUID)
	return err == nil
}

// FuzzTableAnswer: the one pass never accepts table metadata the
// encoding/json check refused, and accepts what it accepted unless the
// answer is ambiguous (invalid UTF-8, a repeated key, a key matched only
// case-insensitively) or has a mistyped metadata-location.
func FuzzTableAnswer(f *testing.F) {
	f.Add([]byte(`{"metadata":` + okMeta + `}`))
	f.Add(tableAnswer(2))
	f.Add([]byte(`{"metadata-location":"m","metadata":{"format-version":1,"table-uuid":"` + okUUID + `","properties":{"a":"b"},"refs":{"main":{}}}}`))
	f.Add([]byte(`{"metadata":{"format-version":2,"table-uuid":"` + okUUID + `","snapshots":[null,{}]}}`))
	f.Add([]byte(`{"metadata":` + okMeta + `,"config":{"signer.uri":"u"},"remote-signing-config":{"properties":{"a":"b"},"headers":{"A":["t"]}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		_, v := scanTableAnswer(body)
		old := legacyCheck(body)
		if v.ok() && !old {
			t.Fatalf("accepted what the encoding/json check refused: %q", body)
		}
		if old && !v.ok() && utf8.Valid(body) && v.syntax == nil && !bytes.Contains(bytes.ToLower(body), []byte(`metadata-location`)) &&
			!caseVariantKeys(body) {
			t.Fatalf("refused what the encoding/json check accepted: %q: %v", body, v.metadata)
		}
	})
}

// caseVariantKeys tells a body where encoding/json may have matched a
// key to a field case-insensitively: a known key's name in another case.
func caseVariantKeys(body []byte) bool {
	for _, k := range []string{"metadata", "format-version", "table-uuid", "location", "last-updated-ms", "last-column-id",
		"schemas", "current-schema-id", "partition-specs", "default-spec-id", "sort-orders", "properties",
		"current-snapshot-id", "snapshots", "snapshot-log", "metadata-log", "refs",
		"config", "storage-credentials", "remote-signing-config", "headers"} {
		if bytes.Count(bytes.ToLower(body), []byte(`"`+k+`"`)) != bytes.Count(body, []byte(`"`+k+`"`)) {
			return true
		}
	}
	return bytes.Contains(body, []byte(`\u`)) // an escaped letter may spell a key in another case
}

// A body is read whole as net/http delivers it: a HEAD's declared length
// is not waited for, a body cut short is an error, either way it is read.
func TestReadBodyModes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "5")
		if r.URL.Path == "/cut" {
			w.Header().Set("Content-Length", "50")
		}
		if r.Method != http.MethodHead {
			_, _ = w.Write([]byte("hello"))
		}
	}))
	defer srv.Close()
	for _, mode := range []readMode{readOwned, readPooled} {
		for _, c := range []struct {
			method, path, want string
			cut                bool
		}{{"GET", "/", "hello", false}, {"HEAD", "/", "", false}, {"GET", "/cut", "", true}} {
			req, _ := http.NewRequest(c.method, srv.URL+c.path, nil)
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			data, pb, err := readBody(resp, mode)
			resp.Body.Close()
			if (err != nil) != c.cut || (!c.cut && string(data) != c.want) {
				t.Errorf("mode %d %s %s: %q, %v", mode, c.method, c.path, data, err)
			}
			pb.release()
		}
	}
}
