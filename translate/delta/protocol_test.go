package delta

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Protocols the Delta protocol does not allow, each with its exact error.
func TestProtocolValidateBadInput(t *testing.T) {
	for _, tc := range []struct{ name, protocol, message string }{
		{"reader missing", `{"min-writer-version":2}`, "protocol.min-reader-version is required"},
		{"writer missing", `{"min-reader-version":1}`, "protocol.min-writer-version is required"},
		{"reader 5", `{"min-reader-version":5,"min-writer-version":7,"reader-features":[],"writer-features":[]}`, "protocol.min-reader-version must be 1, 2 or 3, got 5"},
		{"writer 8", `{"min-reader-version":1,"min-writer-version":8}`, "protocol.min-writer-version must be between 1 and 7, got 8"},
		{"writer 0", `{"min-reader-version":1,"min-writer-version":0}`, "protocol.min-writer-version must be between 1 and 7, got 0"},
		{"reader 3 writer 5", `{"min-reader-version":3,"min-writer-version":5,"reader-features":[]}`, "protocol: reader version 3 needs writer version 7, got 5"},
		{"writer 7 without features", `{"min-reader-version":1,"min-writer-version":7}`, "protocol: writer version 7 must list writer-features"},
		{"reader 3 without features", `{"min-reader-version":3,"min-writer-version":7,"writer-features":[]}`, "protocol: reader version 3 must list reader-features"},
		{"reader features on reader 1", `{"min-reader-version":1,"min-writer-version":7,"reader-features":["columnMapping"],"writer-features":["columnMapping"]}`, "protocol: reader-features are only listed with reader version 3, got 1"},
		{"writer features on writer 4", `{"min-reader-version":1,"min-writer-version":4,"writer-features":["changeDataFeed"]}`, "protocol: writer-features are only listed with writer version 7, got 4"},
		{"unknown writer feature", `{"min-reader-version":1,"min-writer-version":7,"writer-features":["teleport"]}`, `protocol: unknown table feature "teleport"`},
		{"unknown reader feature", `{"min-reader-version":3,"min-writer-version":7,"reader-features":["teleport"],"writer-features":["teleport"]}`, `protocol: unknown table feature "teleport"`},
		{"writer-only feature read", `{"min-reader-version":3,"min-writer-version":7,"reader-features":["appendOnly"],"writer-features":["appendOnly"]}`, `protocol: "appendOnly" is a writer-only feature and cannot be in reader-features`},
		{"reader feature not written", `{"min-reader-version":3,"min-writer-version":7,"reader-features":["deletionVectors"],"writer-features":[]}`, `protocol: reader feature "deletionVectors" must be in writer-features too`},
		{"reader-writer feature only written", `{"min-reader-version":3,"min-writer-version":7,"reader-features":[],"writer-features":["deletionVectors"]}`, `protocol: "deletionVectors" is a reader-writer feature and must be in reader-features too`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p Protocol
			require.NoError(t, json.Unmarshal([]byte(tc.protocol), &p))
			requireError(t, p.validate(), http.StatusBadRequest, InvalidParameterValue, tc.message)
		})
	}
}

func TestProtocolValidateAccepts(t *testing.T) {
	for _, ok := range []string{
		`{"min-reader-version":1,"min-writer-version":2}`,
		`{"min-reader-version":2,"min-writer-version":5}`,
		`{"min-reader-version":1,"min-writer-version":7,"writer-features":["appendOnly","domainMetadata","clustering"]}`,
		`{"min-reader-version":3,"min-writer-version":7,"reader-features":["deletionVectors","columnMapping"],"writer-features":["deletionVectors","columnMapping","rowTracking","domainMetadata"]}`,
		`{"min-reader-version":3,"min-writer-version":7,"reader-features":["variantType-preview"],"writer-features":["variantType-preview"]}`,
	} {
		var p Protocol
		require.NoError(t, json.Unmarshal([]byte(ok), &p))
		assert.NoError(t, p.validate(), ok)
	}
}

// Domain configurations of the wrong shape.
func TestDomainShapesBadInput(t *testing.T) {
	for _, tc := range []struct{ name, domains, message string }{
		{"not an object", `{"d":[1]}`, `domain "d": configuration must be a JSON object`},
		{"empty name", `{"":{}}`, "domain names must not be empty"},
		{"clustering missing", `{"delta.clustering":{}}`, `domain "delta.clustering": missing "clusteringColumns"`},
		{"clustering flat", `{"delta.clustering":{"clusteringColumns":["a"]}}`, `domain "delta.clustering": configuration does not match its schema: json: cannot unmarshal string into Go struct field .clusteringColumns of type []string`},
		{"clustering empty path", `{"delta.clustering":{"clusteringColumns":[[]]}}`, `domain "delta.clustering": clusteringColumns paths must be non-empty lists of non-empty names`},
		{"clustering empty name", `{"delta.clustering":{"clusteringColumns":[["a",""]]}}`, `domain "delta.clustering": clusteringColumns paths must be non-empty lists of non-empty names`},
		{"clustering extra key", `{"delta.clustering":{"clusteringColumns":[["a"]],"x":1}}`, `domain "delta.clustering": configuration does not match its schema: json: unknown field "x"`},
		{"row tracking fraction", `{"delta.rowTracking":{"rowIdHighWaterMark":1.5}}`, `domain "delta.rowTracking": configuration does not match its schema: at rowIdHighWaterMark: number 1.5 does not fit int64`},
		{"row tracking string", `{"delta.rowTracking":{"rowIdHighWaterMark":"7"}}`, `domain "delta.rowTracking": configuration does not match its schema: json: cannot unmarshal string into Go struct field .rowIdHighWaterMark of type int64`},
		{"row tracking negative", `{"delta.rowTracking":{"rowIdHighWaterMark":-2}}`, `domain "delta.rowTracking": rowIdHighWaterMark must be at least -1 (none assigned)`},
		{"unknown system domain", `{"delta.teleport":{}}`, `domain "delta.teleport": unknown system domain (delta.* domains belong to Delta features; lakegate knows delta.clustering and delta.rowTracking)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(tc.domains), &d))
			_, err := domainProps(d)
			requireError(t, err, http.StatusBadRequest, InvalidParameterValue, tc.message)
		})
	}
	_, err := domainProps(map[string]json.RawMessage{"delta.rowTracking": json.RawMessage(`{"rowIdHighWaterMark":-1}`), "app.x": json.RawMessage(`{"any":[1]}`)})
	assert.NoError(t, err)
}

// What an update may turn on, against the protocol the table will have.
func TestCheckUpdateState(t *testing.T) {
	const v7 = `{"min-reader-version":1,"min-writer-version":7,"writer-features":["domainMetadata","changeDataFeed"]}`
	for _, tc := range []struct {
		name    string
		stored  string
		updates string
		message string // "" = accepted
	}{
		{"downgrade", v7, `[{"action":"set-protocol","protocol":{"min-reader-version":1,"min-writer-version":4}}]`, "set-protocol: protocol versions cannot go down (reader 1, writer 7 now)"},
		{"drop feature", v7, `[{"action":"set-protocol","protocol":{"min-reader-version":1,"min-writer-version":7,"writer-features":["domainMetadata"]}}]`, `set-protocol: table feature "changeDataFeed" cannot be removed`},
		{"legacy feature lost", `{"min-reader-version":1,"min-writer-version":2}`, `[{"action":"set-protocol","protocol":{"min-reader-version":1,"min-writer-version":7,"writer-features":["appendOnly"]}}]`, `set-protocol: writer version 2 supports "invariants"; writer 7 must list it`},
		{"property needs feature", `{"min-reader-version":1,"min-writer-version":2}`, `[{"action":"set-properties","updates":{"delta.enableChangeDataFeed":"true"}}]`, `property delta.enableChangeDataFeed=true needs the "changeDataFeed" table feature in the protocol`},
		{"property with upgrade", `{"min-reader-version":1,"min-writer-version":2}`, `[{"action":"set-protocol","protocol":{"min-reader-version":1,"min-writer-version":4}},{"action":"set-properties","updates":{"delta.enableChangeDataFeed":"true"}}]`, ""},
		{"domain needs feature", `{"min-reader-version":1,"min-writer-version":2}`, `[{"action":"set-domain-metadata","updates":{"app.x":{"a":1}}}]`, `domain metadata needs writer version 7 with the "domainMetadata" writer feature`},
		{"domain with feature", v7, `[{"action":"set-domain-metadata","updates":{"app.x":{"a":1}}}]`, ""},
		{"row tracking needs feature", v7, `[{"action":"set-domain-metadata","updates":{"delta.rowTracking":{"rowIdHighWaterMark":3}}}]`, `domain "delta.rowTracking" needs the "rowTracking" writer feature`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"requirements":[` + okUUID + `],"updates":` + tc.updates + `}`
			req, perr := parseUpdate([]byte(body))
			require.NoError(t, perr)
			by := map[string]*Update{}
			for i := range req.Updates {
				by[req.Updates[i].Action] = &req.Updates[i]
			}
			err := checkUpdateState(map[string]string{PropProtocol: tc.stored}, nil, by)
			if tc.message == "" {
				assert.NoError(t, err)
				return
			}
			requireError(t, err, http.StatusBadRequest, InvalidParameterValue, tc.message)
		})
	}
}

// Removing a domain the table does not have is refused; one it has is not.
func TestRemoveUnknownDomain(t *testing.T) {
	const v7 = `{"min-reader-version":1,"min-writer-version":7,"writer-features":["domainMetadata"]}`
	props := map[string]string{PropProtocol: v7, PropDomainPrefix + "app.x": `{"a":1}`}
	check := func(domains string) error {
		return checkUpdateState(props, nil, parseUpdates(t, `[{"action":"remove-domain-metadata","domains":`+domains+`}]`))
	}
	assert.NoError(t, check(`["app.x"]`))
	requireError(t, check(`["app.x","app.y"]`), http.StatusBadRequest, InvalidParameterValue, `remove-domain-metadata: the table has no domain "app.y"`)
}

// A managed table holds at most maxUnbackfilled unbackfilled commits: the
// next add-commit is 429 ResourceExhaustedException, as the spec bounds it.
func TestUnbackfilledCommitsBounded(t *testing.T) {
	var commits []Commit
	for v := int64(maxUnbackfilled); v >= 1; v-- {
		n, name := v, "c.json"
		commits = append(commits, Commit{Version: &n, Timestamp: &n, FileName: &name, FileSize: &n, FileModificationTimestamp: &n})
	}
	props := map[string]string{PropTableType: Managed, PropLatestVersion: strconv.Itoa(maxUnbackfilled), PropCommits: encodeCommits(commits)}
	m, err := table.NewMetadata(iceberg.NewSchema(0), iceberg.UnpartitionedSpec, table.UnsortedSortOrder, "file:///w/t", props)
	require.NoError(t, err)
	body := `{"requirements":[` + okUUID + `],"updates":[{"action":"add-commit","commit":{"version":51,"timestamp":1,` +
		`"file-name":"x.json","file-size":1,"file-modification-timestamp":1},"uniform":{"iceberg":{"metadata-location":"file:///w/t/m.json"}}}]}`
	req, perr := parseUpdate([]byte(body))
	require.NoError(t, perr)
	requireError(t, checkVersions(req, &loaded{Metadata: m}), http.StatusTooManyRequests, ResourceExhausted,
		"the table has 50 unbackfilled commits, the most lakegate keeps: publish them to the Delta log "+
			"and send set-latest-backfilled-version before committing again")
}

// ntzProtocol lists timestampNtz the way the Delta protocol requires.
const ntzProtocol = `{"min-reader-version":3,"min-writer-version":7,"reader-features":["timestampNtz"],"writer-features":["timestampNtz"]}`

// A timestamp_ntz column, at any depth, needs the timestampNtz
// reader-writer feature: reader 3 and writer 7 listing it in both lists.
// The refusal is 400 naming the column.
func TestTimestampNtzNeedsFeature(t *testing.T) {
	ntzAt := map[string]string{ // column path → columns holding timestamp_ntz there
		"t":             `{"name":"t","type":"timestamp_ntz","nullable":true,"metadata":{}}`,
		"s.t":           `{"name":"s","type":{"type":"struct","fields":[{"name":"t","type":"timestamp_ntz","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}`,
		"a.element":     `{"name":"a","type":{"type":"array","element-type":"timestamp_ntz","contains-null":true},"nullable":true,"metadata":{}}`,
		"m.key":         `{"name":"m","type":{"type":"map","key-type":"timestamp_ntz","value-type":"long","value-contains-null":true},"nullable":true,"metadata":{}}`,
		"m.value.x.t":   `{"name":"m","type":{"type":"map","key-type":"string","value-type":{"type":"struct","fields":[{"name":"x","type":{"type":"struct","fields":[{"name":"t","type":"timestamp_ntz","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}]},"value-contains-null":true},"nullable":true,"metadata":{}}`,
		"a.element.key": `{"name":"a","type":{"type":"array","element-type":{"type":"map","key-type":"timestamp_ntz","value-type":"long","value-contains-null":true},"contains-null":true},"nullable":true,"metadata":{}}`,
	}
	for _, tc := range []struct {
		name, protocol string
		ok             bool
	}{
		{"legacy protocol", `{"min-reader-version":1,"min-writer-version":2}`, false},
		{"writer 7 without it", `{"min-reader-version":1,"min-writer-version":7,"writer-features":["appendOnly"]}`, false},
		{"writer-features only, reader 1", `{"min-reader-version":1,"min-writer-version":7,"writer-features":["timestampNtz"]}`, false},
		{"another reader-writer feature", `{"min-reader-version":3,"min-writer-version":7,"reader-features":["deletionVectors"],"writer-features":["deletionVectors"]}`, false},
		{"both lists", ntzProtocol, true},
		{"preview name", `{"min-reader-version":3,"min-writer-version":7,"reader-features":["timestampNtz-preview"],"writer-features":["timestampNtz-preview"]}`, true},
	} {
		for path, col := range ntzAt {
			t.Run(tc.name+"/"+path, func(t *testing.T) {
				_, err := ParseCreate(createReq(func(m map[string]any) {
					m["protocol"] = json.RawMessage(tc.protocol)
					m["columns"] = cols(`{"name":"id","type":"long","nullable":false,"metadata":{}},` + col)
				}))
				if tc.ok {
					assert.NoError(t, err)
					return
				}
				requireError(t, err, http.StatusBadRequest, InvalidParameterValue, `column "`+path+`" is timestamp_ntz, which needs `+
					`the "timestampNtz" table feature: reader version 3 and writer version 7 with "timestampNtz" in reader-features and writer-features`)
			})
		}
	}
	_, err := ParseCreate(createReq(func(m map[string]any) {
		m["columns"] = cols(`{"name":"t","type":"timestamp","nullable":true,"metadata":{}}`)
	}))
	assert.NoError(t, err, "timestamp (with time zone) needs no feature")
}

// On update, set-columns is judged against the protocol the table will
// have, and a protocol change re-judges the table's current columns.
func TestTimestampNtzOnUpdate(t *testing.T) {
	const legacy = `{"min-reader-version":1,"min-writer-version":2}`
	const ntzColumns = `{"action":"set-columns","columns":{"type":"struct","fields":[{"name":"s","type":{"type":"struct","fields":[` +
		`{"name":"t","type":"timestamp_ntz","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}]}}`
	const toV7 = `{"action":"set-protocol","protocol":{"min-reader-version":1,"min-writer-version":7,"writer-features":["appendOnly","invariants"]}}`
	const toNtz = `{"action":"set-protocol","protocol":{"min-reader-version":3,"min-writer-version":7,"reader-features":["timestampNtz"],"writer-features":["appendOnly","invariants","timestampNtz"]}}`
	// Iceberg's timestamp (without zone) is Delta's timestamp_ntz.
	ntzTable := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "t", Type: iceberg.PrimitiveTypes.Timestamp})
	for _, tc := range []struct {
		name, stored string
		current      *iceberg.Schema
		updates      string
		message      string // "" = accepted
	}{
		{"set-columns without the feature", legacy, nil, `[` + ntzColumns + `]`, `column "s.t" is timestamp_ntz`},
		{"set-columns with the table's feature", ntzProtocol, nil, `[` + ntzColumns + `]`, ""},
		{"set-columns with the request's feature", legacy, nil, `[` + toNtz + `,` + ntzColumns + `]`, ""},
		{"protocol change, current column", legacy, ntzTable, `[` + toV7 + `]`, `column "t" is timestamp_ntz`},
		{"protocol change adding the feature", legacy, ntzTable, `[` + toNtz + `]`, ""},
		{"no protocol change: not re-judged", legacy, ntzTable, `[{"action":"set-properties","updates":{"k":"v"}}]`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkUpdateState(map[string]string{PropProtocol: tc.stored}, tc.current, parseUpdates(t, tc.updates))
			if tc.message == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, http.StatusBadRequest, AsError(err).Code)
			assert.Equal(t, InvalidParameterValue, AsError(err).Type)
			assert.Contains(t, AsError(err).Message, tc.message)
		})
	}
}
