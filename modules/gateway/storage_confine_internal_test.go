package gateway

import (
	"testing"

	"github.com/lakegate/lakegate/upstream/locations"
)

// BenchmarkTableLocations is what reading a table answer's locations
// costs once they are confined to the catalog's (a sign decision made, a
// vending): "unconfined" is the read alone, as before the check.
func BenchmarkTableLocations(b *testing.B) {
	body := []byte(`{"metadata-location":"s3://lake/wh/sales.db/t/metadata/00001.json","metadata":{"format-version":2,` +
		`"location":"s3://lake/wh/sales.db/t","properties":{"write.data.path":"s3://lake/wh/sales.db/t/data","owner":"x"}}}`)
	rule, err := locations.New("s3://lake/wh")
	if err != nil {
		b.Fatal(err)
	}
	// What the check adds: the three locations against the rule.
	b.Run("check", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, loc := range []string{"s3://lake/wh/sales.db/t", "s3://lake/wh/sales.db/t/data", ""} {
				if loc != "" && !rule.Allows(loc) {
					b.Fatal(loc)
				}
			}
		}
	})
	b.Run("confined", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tableLocations(body, rule); err != nil {
				b.Fatal(err)
			}
		}
	})
}
