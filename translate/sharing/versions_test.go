package sharing

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const uuid36 = "8b0086f2-3d01-4ca3-ad9e-7dc3355aedb2"

func TestFileNumber(t *testing.T) {
	for loc, want := range map[string]int64{
		"s3://b/t/metadata/00000-" + uuid36 + ".metadata.json":       0,
		"file:///w/t/metadata/00017-" + uuid36 + ".gz.metadata.json": 17,
		"/w/t/metadata/123456-" + uuid36 + ".metadata.json":          123456,
		"hdfs://n/t/metadata/v3.metadata.json":                       3,
		"hdfs://n/t/metadata/v4.gz.metadata.json":                    4,
		"s3://b/t/metadata/v5-" + uuid36 + ".metadata.json":          5,
		"s3://b/t/metadata/v6-" + uuid36 + ".gz.metadata.json":       6,
	} {
		n, ok := fileNumber(loc)
		assert.True(t, ok, loc)
		assert.Equal(t, want, n, loc)
	}
	for _, bad := range []string{
		"s3://b/t/metadata/" + uuid36 + ".metadata.json", // no number
		"s3://b/t/metadata/00001-short.metadata.json",
		"s3://b/t/metadata/00001-" + uuid36 + ".metadata.json.tmp",
		"s3://b/t/metadata/-1-" + uuid36 + ".metadata.json",
		"s3://b/t/metadata/v7-short.metadata.json",
		"s3://b/t/metadata/v-" + uuid36 + ".metadata.json",
		"s3://b/t/metadata/99999999999999999999-" + uuid36 + ".metadata.json", // overflows int64
		"s3://b/t/metadata/",
		"",
	} {
		_, ok := fileNumber(bad)
		assert.False(t, ok, bad)
	}
}

func loc(n string) string { return "s3://b/t/metadata/" + n + "-" + uuid36 + ".metadata.json" }

// Versions are file numbers, strictly increasing; a log with an unnumbered
// file falls back to positions; times never go back.
func TestHistoryNumber(t *testing.T) {
	h := history{{Loc: loc("00003"), Ts: 10}, {Loc: loc("00004"), Ts: 20}, {Loc: loc("00009"), Ts: 15}, {Loc: loc("00002"), Ts: 30}}
	h.number()
	assert.Equal(t, []int64{3, 4, 9, 10}, []int64{h[0].V, h[1].V, h[2].V, h[3].V})
	assert.Equal(t, []int64{10, 20, 20, 30}, []int64{h[0].Ts, h[1].Ts, h[2].Ts, h[3].Ts})

	p := history{{Loc: loc("00005")}, {Loc: "s3://b/t/metadata/custom.json"}, {Loc: loc("00007")}}
	p.number()
	assert.Equal(t, []int64{0, 1, 2}, []int64{p[0].V, p[1].V, p[2].V})
}

// A trimmed metadata log: versions before its oldest entry are refused
// with the reason; a version in a numbering gap reads the file before it.
func TestHistoryAtTrimmedLog(t *testing.T) {
	h := history{{Loc: loc("00003"), Ts: 1000}, {Loc: loc("00004"), Ts: 2000}, {Loc: loc("00009"), Ts: 3000}}
	h.number()
	_, err := h.at(2)
	requireError(t, err, http.StatusBadRequest, CodeInvalidParameter, "version 2 is no longer available: the table's metadata log starts at version 3")
	_, err = h.at(10)
	requireError(t, err, http.StatusBadRequest, CodeInvalidParameter, "version 10 does not exist: the latest version is 9")
	v, err := h.at(7)
	require.NoError(t, err)
	assert.Equal(t, int64(4), v.V, "a gap reads the latest file before it")
	_, err = h.asOf(time.UnixMilli(500))
	requireError(t, err, http.StatusBadRequest, CodeInvalidParameter,
		"timestamp 1970-01-01T00:00:00Z is before version 3 (1970-01-01T00:00:01Z), the oldest the table's metadata log keeps")
	v, err = h.asOf(time.UnixMilli(2500))
	require.NoError(t, err)
	assert.Equal(t, int64(4), v.V)
	_, err = h.since(time.UnixMilli(3500))
	requireError(t, err, http.StatusBadRequest, CodeInvalidParameter, "timestamp 1970-01-01T00:00:03Z is after the table's latest version 9")
	requireError(t, notFuture(time.UnixMilli(3500), time.UnixMilli(3000)), http.StatusBadRequest, CodeInvalidParameter,
		"timestamp 1970-01-01T00:00:03Z is in the future")
	v, err = h.since(time.UnixMilli(2500))
	require.NoError(t, err)
	assert.Equal(t, int64(9), v.V)
}

// A catalog that names its files v<N>-<uuid>.metadata.json and keeps no
// metadata log: the current file's number is the table's version (not 0),
// and older versions are refused as no longer available, not answered
// with the current table.
func TestHistoryWithoutMetadataLog(t *testing.T) {
	h := history{{Loc: "s3://b/t/metadata/v5-" + uuid36 + ".metadata.json", Ts: 1000}}
	h.number()
	assert.Equal(t, int64(5), h.latest().V)
	_, err := h.at(2)
	requireError(t, err, http.StatusBadRequest, CodeInvalidParameter,
		"version 2 is no longer available: the table's metadata log starts at version 5")
	v, err := h.at(5)
	require.NoError(t, err)
	assert.Equal(t, int64(5), v.V)
}
