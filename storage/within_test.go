package storage

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWithin(t *testing.T) {
	places := TableLocations("s3://bkt/wh/sales.db/t", "s3://bkt/data/t")
	for _, in := range []string{
		"s3://bkt/wh/sales.db/t/data/f.parquet",
		"s3a://bkt/wh/sales.db/t/metadata/v1.json",
		"s3://bkt/data/t/x/f.parquet",
	} {
		assert.NoError(t, Within(places, in), in)
	}
	for _, out := range []string{
		"s3://bkt/wh/sales.db/t2/data/f.parquet",     // a sibling prefix
		"s3://bkt/wh/sales.db/t",                     // the location itself
		"s3://other/wh/sales.db/t/data/f.parquet",    // another bucket
		"s3://bkt/wh/sales.db/t/../t2/f.parquet",     // traversal
		"s3://bkt/wh/sales.db/t/%2e%2e/t2/f.parquet", // encoded traversal
		"s3://bkt/wh/sales.db/t//f.parquet",          // an empty segment
		"gs://bkt/wh/sales.db/t/data/f.parquet",      // not S3
		"s3://bkt/wh/sales.db/t/data/f.parquet?acl",  // a query
		"file:///bkt/wh/sales.db/t/data/f.parquet",   // a local file
		"s3://user@bkt/wh/sales.db/t/data/f.parquet", // user info
		"s3://bkt/wh/sales.db/t/data/f.parquet#x",    // a fragment
		"s3://bkt/wh/sales.db/t/data/f\\..\\parquet", // a backslash
	} {
		assert.Error(t, Within(places, out), out)
	}
	assert.Error(t, Within(nil, "s3://bkt/wh/sales.db/t/data/f.parquet"), "no places, nothing inside")
}
