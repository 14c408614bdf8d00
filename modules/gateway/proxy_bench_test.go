package gateway_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// proxyAnswer is a LoadTable answer of about size bytes: a table with as
// many snapshots as fill it.
func proxyAnswer(size int) []byte {
	var snaps []string
	for i := 0; len(snaps)*275 < size; i++ {
		snaps = append(snaps, fmt.Sprintf(`{"snapshot-id":%d,"sequence-number":%d,"timestamp-ms":1796173688714,`+
			`"manifest-list":"s3://bucket/warehouse/ns.db/t/metadata/snap-%d-1-0d5e5c9b-7b7c-4b8e-9a5f-3f1c2b7d8e9f.avro",`+
			`"summary":{"operation":"append","added-records":"100","total-records":"%d"},"schema-id":0}`, i+1, i+1, i+1, 100*(i+1)))
	}
	return []byte(`{"metadata-location":"s3://bucket/warehouse/ns.db/t/metadata/00001.metadata.json","metadata":{` +
		`"format-version":2,"table-uuid":"b6c62d85-a60f-45cd-a3f0-4f9c5f45d400","location":"s3://bucket/warehouse/ns.db/t",` +
		`"last-updated-ms":1796173779607,"last-column-id":2,"current-schema-id":0,` +
		`"schemas":[{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"}]}],` +
		`"default-spec-id":0,"partition-specs":[{"spec-id":0,"fields":[]}],"sort-orders":[{"order-id":0,"fields":[]}],` +
		`"properties":{"owner":"lakegate"},"current-snapshot-id":1,"snapshots":[` + strings.Join(snaps, ",") + `],` +
		`"refs":{"main":{"snapshot-id":1,"type":"branch"}}},"config":{}}`)
}

// BenchmarkProxiedLoadTable: LoadTable through a lakegate remote catalog
// (no cache) in front of a backend answering from memory, at 21 KB and
// 10 MB, against the backend direct: the proxy's cost per answer, the
// ratio issue 36 is about. Client, gateway and backend share the cores.
func BenchmarkProxiedLoadTable(b *testing.B) {
	client := benchClient(b)
	sizes := []int{21 << 10, 10 << 20}
	bodies := map[string][]byte{}
	for _, size := range sizes {
		bodies["/v1/namespaces/ns/tables/t"+strconv.Itoa(size)] = proxyAnswer(size)
	}
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := bodies[r.URL.Path]
		if !ok {
			_, _ = w.Write([]byte(`{"defaults":{},"overrides":{}}`)) // /v1/config
			return
		}
		w.Header()["Content-Type"] = []string{"application/json"}
		w.Header()["Content-Length"] = []string{strconv.Itoa(len(body))}
		_, _ = w.Write(body)
	}))
	b.Cleanup(backend.Close)
	name := uniqueName("proxy")
	base := gateway(b, map[string]any{"catalogs": []any{remote(name, backend.URL, nil)}})
	for _, size := range sizes {
		path := "/namespaces/ns/tables/t" + strconv.Itoa(size)
		n := len(bodies["/v1"+path])
		for _, tg := range []struct{ name, url string }{
			{"direct", backend.URL + "/v1" + path},
			{"gateway", base + "/v1/" + name + path},
		} {
			require.Equal(b, n, loadOnce(b, client, tg.url))
			parallel(b, fmt.Sprintf("%s/%dKB", tg.name, n>>10), n, func() error { return loadTable(client, tg.url, "") })
		}
	}
}
