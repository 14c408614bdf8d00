package actions

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/translate/deltalog"
)

// A log's protocol line: the log's own in delta format, reader 1 in
// parquet format; and which logs the parquet format cannot carry.
func TestLogProtocol(t *testing.T) {
	for _, tc := range []struct {
		name      string
		p         deltalog.Protocol
		conf      map[string]string
		delta     string
		needDelta bool
	}{
		{"legacy", deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, nil,
			`{"protocol":{"deltaProtocol":{"minReaderVersion":1,"minWriterVersion":2}}}`, false},
		{"features, none a parquet reader needs", deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"deletionVectors", "v2Checkpoint"}, WriterFeatures: []string{"deletionVectors", "v2Checkpoint", "appendOnly"}}, nil,
			`{"protocol":{"deltaProtocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors","v2Checkpoint"],` +
				`"writerFeatures":["deletionVectors","v2Checkpoint","appendOnly"]}}}`, false},
		{"column mapping by name", deltalog.Protocol{MinReaderVersion: 2, MinWriterVersion: 5}, map[string]string{"delta.columnMapping.mode": "name"},
			`{"protocol":{"deltaProtocol":{"minReaderVersion":2,"minWriterVersion":5}}}`, true},
		{"timestamp without zone", deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"timestampNtz"}, WriterFeatures: []string{"timestampNtz"}}, nil,
			`{"protocol":{"deltaProtocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["timestampNtz"],"writerFeatures":["timestampNtz"]}}}`, true},
		{"variant preview", deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"variantType-preview"}, WriterFeatures: []string{"variantType-preview"}}, nil,
			`{"protocol":{"deltaProtocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["variantType-preview"],"writerFeatures":["variantType-preview"]}}}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tbl := LogTable{Protocol: tc.p, Metadata: deltalog.Metadata{Configuration: tc.conf}}
			b, err := LogProtocol(Delta, tbl)
			require.NoError(t, err)
			assert.JSONEq(t, tc.delta, string(b))
			b, err = LogProtocol(Parquet, tbl)
			require.NoError(t, err)
			assert.JSONEq(t, `{"protocol":{"minReaderVersion":1}}`, string(b))
			assert.Equal(t, tc.needDelta, LogNeedsDelta(tc.p, tbl.Metadata) != "")
		})
	}
}

// A log's file line carries the log's partition values (a null one as
// null) and stats as written, in both formats.
func TestLogFileLine(t *testing.T) {
	eu := "eu"
	f := File{URL: "https://x/f", Version: 3, Timestamp: 7, Log: &LogFile{Location: "file:/t/region=eu/a.parquet",
		PartitionValues: map[string]*string{"region": &eu, "day": nil}, Size: 10, Stats: `{"numRecords":2}`}}
	b, err := FileLine(Parquet, f, true)
	require.NoError(t, err)
	var got map[string]map[string]any
	require.NoError(t, json.Unmarshal(b, &got))
	assert.Equal(t, map[string]any{"region": "eu", "day": nil}, got["file"]["partitionValues"])
	assert.Equal(t, `{"numRecords":2}`, got["file"]["stats"])
	assert.Equal(t, FileID("file:/t/region=eu/a.parquet"), got["file"]["id"])
	b, err = FileLine(Delta, f, true)
	require.NoError(t, err)
	var d struct {
		File struct {
			DeltaSingleAction struct{ Add map[string]any }
		}
	}
	require.NoError(t, json.Unmarshal(b, &d))
	assert.Equal(t, map[string]any{"region": "eu", "day": nil}, d.File.DeltaSingleAction.Add["partitionValues"])
	assert.EqualValues(t, 10, d.File.DeltaSingleAction.Add["size"])
	// No stats in the log: none on the line.
	f.Log.Stats = ""
	b, err = FileLine(Parquet, f, false)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "stats")
}
