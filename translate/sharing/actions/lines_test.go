package actions_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/lakegate/lakegate/translate/sharing/actions"
)

const (
	tableID  = "f8d5c169-3d01-4ca3-ad9e-7dc3355aedb2"
	filePath = "s3://bucket/t/data/date=2021-04-28/00000-0-8b0086f2.parquet"
	fileURL  = "https://bucket.s3.amazonaws.com/t/data/date%3D2021-04-28/00000-0-8b0086f2.parquet?X-Amz-Signature=abc"
)

func lineSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "eventTime", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 2, Name: "date", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 3, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 4, Name: "x", Type: iceberg.PrimitiveTypes.Int32, Required: true},
		}}},
	)
}

func lineSpec() iceberg.PartitionSpec {
	return iceberg.NewPartitionSpecID(0, iceberg.PartitionField{
		SourceIDs: []int{2}, FieldID: 1000, Name: "date", Transform: iceberg.IdentityTransform{}})
}

func lineTable() actions.Table {
	size, n := int64(123456), int64(5)
	return actions.Table{
		ID: tableID, Name: "customer", Description: "all customers",
		Schema: lineSchema(), Spec: lineSpec(),
		Properties: iceberg.Properties{
			"enableChangeDataFeed":                  "true",
			"write.format.default":                  "parquet",
			"owner":                                 "sales",
			"lakegate.delta.protocol":               `{"min-reader-version":1}`,
			"schema.name-mapping.default":           `[{"field-id":1,"names":["eventTime"]}]`,
			"gc.enabled":                            "true",
			"format-version":                        "2",
			"commit.retry.num-retries":              "4",
			"history.expire.max-snapshot-age-ms":    "1",
			"read.split.target-size":                "1",
			"s3.secret-access-key":                  "leak1",
			"client.session-TOKEN":                  "leak2",
			"jdbc.Password":                         "leak3",
			"adls.auth.shared-key.account.key":      "leak4",
			"gcs.oauth2.credentials":                "leak5",
			"delta.columnMapping.mode":              "name", // stale, from a Delta conversion
			"delta.columnMapping.maxColumnId":       "99",
			"delta.columnMapping.somethingInternal": "x",
		},
		Version: 20, CreatedTime: 1652140000000, Size: &size, NumFiles: &n,
	}
}

const plainSchema = `{"type":"struct","fields":[
	{"name":"eventTime","type":"timestamp","nullable":true,"metadata":{}},
	{"name":"date","type":"date","nullable":true,"metadata":{}},
	{"name":"s","type":{"type":"struct","fields":[{"name":"x","type":"integer","nullable":false,"metadata":{}}]},"nullable":true,"metadata":{}}]}`

const mappedSchema = `{"type":"struct","fields":[
	{"name":"eventTime","type":"timestamp","nullable":true,
	 "metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"eventTime"}},
	{"name":"date","type":"date","nullable":true,
	 "metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"date"}},
	{"name":"s","type":{"type":"struct","fields":[{"name":"x","type":"integer","nullable":false,
	   "metadata":{"delta.columnMapping.id":4,"delta.columnMapping.physicalName":"x"}}]},"nullable":true,
	 "metadata":{"delta.columnMapping.id":3,"delta.columnMapping.physicalName":"s"}}]}`

func TestProtocol(t *testing.T) {
	cases := []struct {
		name    string
		f       actions.Format
		mapping bool
		want    string
	}{
		{"parquet", actions.Parquet, false, `{"protocol":{"minReaderVersion":1}}`},
		{"delta", actions.Delta, false, `{"protocol":{"deltaProtocol":{"minReaderVersion":1,"minWriterVersion":2}}}`},
		{"delta mapped", actions.Delta, true, `{"protocol":{"deltaProtocol":{"minReaderVersion":3,"minWriterVersion":7,
			"readerFeatures":["columnMapping"],"writerFeatures":["columnMapping"]}}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tbl := lineTable()
			tbl.ColumnMapping = tc.mapping
			got, err := actions.Protocol(tc.f, tbl)
			if err != nil {
				t.Fatal(err)
			}
			assertOneLine(t, got)
			assertJSON(t, got, tc.want)
		})
	}
}

func TestMetadata(t *testing.T) {
	cases := []struct {
		name    string
		f       actions.Format
		mapping bool
		want    string
	}{
		{"parquet", actions.Parquet, false, `{"metaData":{"id":"` + tableID + `","name":"customer","description":"all customers",
			"format":{"provider":"parquet"},"schemaString":` + quote(plainSchema) + `,
			"partitionColumns":["date"],
			"configuration":{"enableChangeDataFeed":"true","owner":"sales"},
			"version":20,"size":123456,"numFiles":5}}`},
		{"delta", actions.Delta, false, `{"metaData":{"version":20,"size":123456,"numFiles":5,"deltaMetadata":{
			"id":"` + tableID + `","name":"customer","description":"all customers",
			"format":{"provider":"parquet","options":{}},"schemaString":` + quote(plainSchema) + `,
			"partitionColumns":["date"],
			"configuration":{"enableChangeDataFeed":"true","owner":"sales"},
			"createdTime":1652140000000}}}`},
		{"delta mapped", actions.Delta, true, `{"metaData":{"version":20,"size":123456,"numFiles":5,"deltaMetadata":{
			"id":"` + tableID + `","name":"customer","description":"all customers",
			"format":{"provider":"parquet","options":{}},"schemaString":` + quote(mappedSchema) + `,
			"partitionColumns":["date"],
			"configuration":{"enableChangeDataFeed":"true","owner":"sales",
				"delta.columnMapping.mode":"id","delta.columnMapping.maxColumnId":"4"},
			"createdTime":1652140000000}}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tbl := lineTable()
			tbl.ColumnMapping = tc.mapping
			got, err := actions.Metadata(tc.f, tbl)
			if err != nil {
				t.Fatal(err)
			}
			assertOneLine(t, got)
			assertJSON(t, got, tc.want)
			if strings.Contains(string(got), "leak") {
				t.Fatalf("secret-looking property leaked: %s", got)
			}
		})
	}
}

func TestMetadataMinimal(t *testing.T) {
	tbl := actions.Table{ID: tableID, Schema: lineSchema(), Spec: *iceberg.UnpartitionedSpec}
	got, err := actions.Metadata(actions.Parquet, tbl)
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, got, `{"metaData":{"id":"`+tableID+`","format":{"provider":"parquet"},
		"schemaString":`+quote(plainSchema)+`,"partitionColumns":[],"configuration":{},"version":0}}`)

	tbl.ColumnMapping = true
	got, err = actions.Metadata(actions.Delta, tbl)
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, got, `{"metaData":{"version":0,"deltaMetadata":{"id":"`+tableID+`",
		"format":{"provider":"parquet","options":{}},"schemaString":`+quote(mappedSchema)+`,"partitionColumns":[],
		"configuration":{"delta.columnMapping.mode":"id","delta.columnMapping.maxColumnId":"4"}}}}`)
}

func ntzTable() actions.Table {
	return actions.Table{ID: tableID, Spec: *iceberg.UnpartitionedSpec, Schema: iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "tags", Type: &iceberg.ListType{ElementID: 2, Element: &iceberg.StructType{
			FieldList: []iceberg.NestedField{{ID: 3, Name: "at", Type: iceberg.PrimitiveTypes.Timestamp}}}}},
	)}
}

func TestTimestampNtzParquetRejected(t *testing.T) {
	for name, build := range map[string]func(actions.Format, actions.Table) ([]byte, error){
		"protocol": actions.Protocol, "metadata": actions.Metadata,
	} {
		got, err := build(actions.Parquet, ntzTable())
		if !errors.Is(err, actions.ErrTimestampNtzNeedsDelta) {
			t.Fatalf("%s: got %s, %v; want ErrTimestampNtzNeedsDelta", name, got, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, "responseformat=delta") || !strings.Contains(msg, "timestampNtz") ||
			!strings.Contains(msg, `"tags.element.at"`) {
			t.Fatalf("%s: unhelpful message %q", name, msg)
		}
	}
}

func TestTimestampNtzDelta(t *testing.T) {
	got, err := actions.Protocol(actions.Delta, ntzTable())
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, got, `{"protocol":{"deltaProtocol":{"minReaderVersion":3,"minWriterVersion":7,
		"readerFeatures":["timestampNtz"],"writerFeatures":["timestampNtz"]}}}`)
	mapped := ntzTable()
	mapped.ColumnMapping = true
	got, err = actions.Protocol(actions.Delta, mapped)
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, got, `{"protocol":{"deltaProtocol":{"minReaderVersion":3,"minWriterVersion":7,
		"readerFeatures":["columnMapping","timestampNtz"],"writerFeatures":["columnMapping","timestampNtz"]}}}`)
	md, err := actions.Metadata(actions.Delta, ntzTable())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), `timestamp_ntz`) {
		t.Fatalf("schemaString lacks timestamp_ntz: %s", md)
	}
}

func TestUnsupportedSchemas(t *testing.T) {
	timeTable := actions.Table{ID: tableID, Spec: *iceberg.UnpartitionedSpec, Schema: iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "t", Type: iceberg.PrimitiveTypes.Time})}
	noSchema := actions.Table{ID: tableID}
	for _, f := range []actions.Format{actions.Parquet, actions.Delta} {
		for name, tbl := range map[string]actions.Table{"time": timeTable, "nil schema": noSchema} {
			if _, err := actions.Protocol(f, tbl); err == nil {
				t.Errorf("%s %s: Protocol: want error", f, name)
			}
			if _, err := actions.Metadata(f, tbl); err == nil {
				t.Errorf("%s %s: Metadata: want error", f, name)
			}
		}
	}
	if _, err := actions.Metadata("json", lineTable()); !errors.Is(err, actions.ErrUnknownFormat) {
		t.Fatalf("unknown format: got %v", err)
	}
}

func lineFile(t *testing.T) actions.File {
	df := dataFile(t, lineSpec(), filePath, 1, 573, fileOpts{
		partition: map[int]any{1000: days("2021-04-28")},
		lower:     map[int][]byte{1: bin(t, iceberg.TimestampLiteral(micros("2021-04-28T23:33:57.955Z")))},
		upper:     map[int][]byte{1: bin(t, iceberg.TimestampLiteral(micros("2021-04-28T23:33:57.955Z")))},
		nulls:     map[int]int64{1: 0},
	})
	return actions.File{URL: fileURL, Data: df, Spec: lineSpec(), Schema: lineSchema(),
		Version: 3, Timestamp: 1652140800000, Expiration: 1652144400000}
}

const lineStats = `{"numRecords":1,"minValues":{"eventTime":"2021-04-28T23:33:57.955Z"},
	"maxValues":{"eventTime":"2021-04-28T23:33:57.955Z"},"nullCount":{"eventTime":0}}`

func TestFileLines(t *testing.T) {
	id := actions.FileID(filePath)
	pv := `"partitionValues":{"date":"2021-04-28"}`
	cases := []struct {
		name  string
		build func(actions.Format, actions.File) ([]byte, error)
		f     actions.Format
		want  string
	}{
		{"parquet file", fileNoVersion, actions.Parquet, `{"file":{"url":"` + fileURL + `","id":"` + id + `",` + pv + `,
			"size":573,"stats":` + quote(lineStats) + `,"expirationTimestamp":1652144400000}}`},
		{"parquet file with version", fileWithVersion, actions.Parquet, `{"file":{"url":"` + fileURL + `","id":"` + id + `",` + pv + `,
			"size":573,"stats":` + quote(lineStats) + `,"version":3,"timestamp":1652140800000,"expirationTimestamp":1652144400000}}`},
		{"parquet add", actions.Add, actions.Parquet, `{"add":{"url":"` + fileURL + `","id":"` + id + `",` + pv + `,
			"size":573,"stats":` + quote(lineStats) + `,"version":3,"timestamp":1652140800000,"expirationTimestamp":1652144400000}}`},
		{"parquet remove", actions.Remove, actions.Parquet, `{"remove":{"url":"` + fileURL + `","id":"` + id + `",` + pv + `,
			"size":573,"version":3,"timestamp":1652140800000,"expirationTimestamp":1652144400000}}`},
		{"delta file", fileNoVersion, actions.Delta, `{"file":{"id":"` + id + `","expirationTimestamp":1652144400000,
			"deltaSingleAction":{"add":{"path":"` + fileURL + `",` + pv + `,"size":573,"modificationTime":1652140800000,
			"dataChange":true,"stats":` + quote(lineStats) + `}}}}`},
		{"delta file with version", fileWithVersion, actions.Delta, `{"file":{"id":"` + id + `","version":3,
			"timestamp":1652140800000,"expirationTimestamp":1652144400000,
			"deltaSingleAction":{"add":{"path":"` + fileURL + `",` + pv + `,"size":573,"modificationTime":1652140800000,
			"dataChange":true,"stats":` + quote(lineStats) + `}}}}`},
		{"delta add", actions.Add, actions.Delta, `{"file":{"id":"` + id + `","version":3,
			"timestamp":1652140800000,"expirationTimestamp":1652144400000,
			"deltaSingleAction":{"add":{"path":"` + fileURL + `",` + pv + `,"size":573,"modificationTime":1652140800000,
			"dataChange":true,"stats":` + quote(lineStats) + `}}}}`},
		{"delta remove", actions.Remove, actions.Delta, `{"file":{"id":"` + id + `","version":3,
			"timestamp":1652140800000,"expirationTimestamp":1652144400000,
			"deltaSingleAction":{"remove":{"path":"` + fileURL + `","deletionTimestamp":1652140800000,"dataChange":true,
			"extendedFileMetadata":true,` + pv + `,"size":573}}}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.build(tc.f, lineFile(t))
			if err != nil {
				t.Fatal(err)
			}
			assertOneLine(t, got)
			assertJSON(t, got, tc.want)
		})
	}
}

func fileNoVersion(f actions.Format, file actions.File) ([]byte, error) {
	return actions.FileLine(f, file, false)
}

func fileWithVersion(f actions.Format, file actions.File) ([]byte, error) {
	return actions.FileLine(f, file, true)
}

func TestFileLineUnpartitionedNoExpiration(t *testing.T) {
	df := dataFile(t, iceberg.NewPartitionSpec(), filePath, 2, 10, fileOpts{})
	file := actions.File{URL: fileURL, Data: df, Spec: iceberg.NewPartitionSpec(), Schema: lineSchema(), Timestamp: 5}
	got, err := actions.FileLine(actions.Parquet, file, false)
	if err != nil {
		t.Fatal(err)
	}
	// partitionValues is required even when empty.
	assertJSON(t, got, `{"file":{"url":"`+fileURL+`","id":"`+actions.FileID(filePath)+`","partitionValues":{},
		"size":10,"stats":"{\"numRecords\":2}"}}`)
}

func TestFileLineErrors(t *testing.T) {
	if _, err := actions.FileLine(actions.Parquet, actions.File{URL: fileURL}, false); err == nil {
		t.Error("nil data file: want error")
	}
	if _, err := actions.Add("csv", lineFile(t)); !errors.Is(err, actions.ErrUnknownFormat) {
		t.Errorf("unknown format: got %v", err)
	}
}

func TestFileID(t *testing.T) {
	sum := sha256.Sum256([]byte(filePath))
	if got := actions.FileID(filePath); got != hex.EncodeToString(sum[:]) {
		t.Fatalf("got %s", got)
	}
	if actions.FileID(filePath) == actions.FileID(filePath+"x") {
		t.Fatal("distinct paths share an id")
	}
}

func TestEndStream(t *testing.T) {
	got, err := actions.EndStream("", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, got, `{"endStreamAction":{}}`)
	got, err = actions.EndStream("rt", "np", 1652140800000)
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, got, `{"endStreamAction":{"refreshToken":"rt","nextPageToken":"np","minUrlExpirationTimestamp":1652140800000}}`)
	got, _ = actions.EndStream("", "np", 0)
	assertJSON(t, got, `{"endStreamAction":{"nextPageToken":"np"}}`)
}

func assertOneLine(t *testing.T, b []byte) {
	t.Helper()
	if strings.ContainsAny(string(b), "\n\r") {
		t.Fatalf("line contains a newline: %q", b)
	}
}

func TestMetadataWideSchema(t *testing.T) {
	tbl := actions.Table{ID: tableID, Schema: testSchema(), Spec: testSpec(), ColumnMapping: true}
	for _, f := range []actions.Format{actions.Parquet, actions.Delta} {
		got, err := actions.Metadata(f, tbl)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		md := parse(t, got).(map[string]any)["metaData"].(map[string]any)
		if f == actions.Delta {
			md = md["deltaMetadata"].(map[string]any)
			if mx := md["configuration"].(map[string]any)["delta.columnMapping.maxColumnId"]; mx != "21" {
				t.Errorf("maxColumnId %v, want 21 (map value id)", mx)
			}
		}
		if cols := md["partitionColumns"].([]any); len(cols) != 2 || cols[0] != "day" || cols[1] != "name" {
			t.Errorf("%s: partitionColumns %v", f, cols)
		}
	}
}

// A table whose history lakegate can serve as a change feed declares it:
// delta.enableChangeDataFeed, writer version 4 or the writer-only
// changeDataFeed feature. One that cannot never shows a stale promise.
func TestChangeDataFeedDeclared(t *testing.T) {
	tbl := lineTable()
	tbl.Properties = iceberg.Properties{"delta.enableChangeDataFeed": "true"}
	for _, tc := range []struct {
		name          string
		cdf, mapping  bool
		protocol, cfg string
	}{
		{"plain with feed", true, false, `{"protocol":{"deltaProtocol":{"minReaderVersion":1,"minWriterVersion":4}}}`, `"true"`},
		{"mapped with feed", true, true, `{"protocol":{"deltaProtocol":{"minReaderVersion":3,"minWriterVersion":7,
			"readerFeatures":["columnMapping"],"writerFeatures":["columnMapping","changeDataFeed"]}}}`, `"true"`},
		{"no feed", false, false, `{"protocol":{"deltaProtocol":{"minReaderVersion":1,"minWriterVersion":2}}}`, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tbl.ChangeDataFeed, tbl.ColumnMapping = tc.cdf, tc.mapping
			got, err := actions.Protocol(actions.Delta, tbl)
			if err != nil {
				t.Fatal(err)
			}
			assertJSON(t, got, tc.protocol)
			md, err := actions.Metadata(actions.Delta, tbl)
			if err != nil {
				t.Fatal(err)
			}
			has := strings.Contains(string(md), `"delta.enableChangeDataFeed":"true"`)
			if has != (tc.cfg != "") {
				t.Fatalf("configuration: feed declared %v, want %v: %s", has, tc.cfg != "", md)
			}
		})
	}
}

// The narrow types the UC Delta API recorded (lakegate.delta.columns) are
// shown in both formats, nested ones too, so Sharing and the UC Delta API
// agree; a hint on a field that is no longer an int is ignored.
func TestMetadataNarrowTypeHints(t *testing.T) {
	tbl := actions.Table{ID: tableID, Spec: *iceberg.UnpartitionedSpec, Schema: iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "b", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 2, Name: "l", Type: &iceberg.ListType{ElementID: 3, Element: iceberg.PrimitiveTypes.Int32}},
		iceberg.NestedField{ID: 4, Name: "now_long", Type: iceberg.PrimitiveTypes.Int64},
	), Properties: iceberg.Properties{"lakegate.delta.columns": `{"1":{"type":"byte"},"3":{"type":"short"},"4":{"type":"short"}}`}}
	want := `{"type":"struct","fields":[
	{"name":"b","type":"byte","nullable":true,"metadata":{}},
	{"name":"l","type":{"type":"array","elementType":"short","containsNull":true},"nullable":true,"metadata":{}},
	{"name":"now_long","type":"long","nullable":true,"metadata":{}}]}`
	for _, f := range []actions.Format{actions.Parquet, actions.Delta} {
		got, err := actions.Metadata(f, tbl)
		if err != nil {
			t.Fatal(err)
		}
		var line struct {
			MetaData struct {
				SchemaString  string `json:"schemaString"`
				DeltaMetadata struct {
					SchemaString string `json:"schemaString"`
				} `json:"deltaMetadata"`
			} `json:"metaData"`
		}
		if err := json.Unmarshal(got, &line); err != nil {
			t.Fatal(err)
		}
		ss := line.MetaData.SchemaString + line.MetaData.DeltaMetadata.SchemaString
		var gotSchema, wantSchema any
		_ = json.Unmarshal([]byte(ss), &gotSchema)
		_ = json.Unmarshal([]byte(want), &wantSchema)
		if !reflect.DeepEqual(gotSchema, wantSchema) {
			t.Errorf("%v: schemaString %s, want %s", f, ss, want)
		}
	}
}
