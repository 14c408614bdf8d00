package upstream

import (
	"fmt"
	"strings"
	"testing"
)

// tableAnswer is a LoadTable answer with n snapshots, shaped like the
// embedded catalog's.
func tableAnswer(n int) []byte {
	var snaps, log []string
	for i := range n {
		snaps = append(snaps, fmt.Sprintf(`{"snapshot-id":%d,"sequence-number":%d,"timestamp-ms":1796173688714,`+
			`"manifest-list":"s3://bucket/warehouse/ns.db/t/metadata/snap-%d-1-0d5e5c9b-7b7c-4b8e-9a5f-3f1c2b7d8e9f.avro",`+
			`"summary":{"operation":"append","added-data-files":"1","added-records":"100","total-records":"%d"},"schema-id":0}`,
			i+1, i+1, i+1, 100*(i+1)))
		log = append(log, fmt.Sprintf(`{"snapshot-id":%d,"timestamp-ms":1796173688714}`, i+1))
	}
	return []byte(`{"metadata-location":"s3://bucket/warehouse/ns.db/t/metadata/00001.metadata.json","metadata":{` +
		`"format-version":2,"table-uuid":"b6c62d85-a60f-45cd-a3f0-4f9c5f45d400","location":"s3://bucket/warehouse/ns.db/t",` +
		`"last-sequence-number":1,"last-updated-ms":1796173779607,"last-column-id":2,"current-schema-id":0,` +
		`"schemas":[{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},` +
		`{"id":2,"name":"region","required":false,"type":"string"}]}],"default-spec-id":0,` +
		`"partition-specs":[{"spec-id":0,"fields":[]}],"last-partition-id":999,"default-sort-order-id":0,` +
		`"sort-orders":[{"order-id":0,"fields":[]}],"properties":{"owner":"lakegate","write.format.default":"parquet"},` +
		fmt.Sprintf(`"current-snapshot-id":%d,"snapshots":[%s],"snapshot-log":[%s],"metadata-log":[],`, n, strings.Join(snaps, ","), strings.Join(log, ",")) +
		`"refs":{"main":{"snapshot-id":1,"type":"branch"}}},"config":{}}`)
}

// The cost of checking an answer's table metadata (now done on every
// load, create, register and commit answer from a remote backend), next
// to the first/last-byte check reads had before and the full JSON
// validation writes had.
func BenchmarkCheckTableMetadata(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		body := tableAnswer(n)
		if _, v := scanTableAnswer(body); !v.ok() {
			b.Fatal(v.syntax, v.metadata)
		}
		b.Run(fmt.Sprintf("snapshots=%d/metadata", n), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				_, _ = scanTableAnswer(body) // the whole pass, without the memo
			}
		})
		b.Run(fmt.Sprintf("snapshots=%d/scanTop", n), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				_, _ = scanTop(body, "loadTable", nil)
			}
		})
	}
}
