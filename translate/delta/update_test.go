package delta

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parseUpdates parses an update body's updates (with an assert-table-uuid)
// into the by-action map update works on.
func parseUpdates(t *testing.T, updates string) map[string]*Update {
	t.Helper()
	req, err := parseUpdate([]byte(`{"requirements":[` + okUUID + `],"updates":` + updates + `}`))
	require.NoError(t, err)
	by := map[string]*Update{}
	for i := range req.Updates {
		by[req.Updates[i].Action] = &req.Updates[i]
	}
	return by
}

// setProps is what the updates' set-properties updates set, read from
// their Iceberg REST JSON (iceberg-go keeps the update types unexported).
func setProps(t *testing.T, ups []table.Update) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, u := range ups {
		var sp struct {
			Action  string            `json:"action"`
			Updates map[string]string `json:"updates"`
		}
		b, err := json.Marshal(u)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &sp))
		if sp.Action == "set-properties" {
			maps.Copy(out, sp.Updates)
		}
	}
	return out
}

// An add-commit always becomes latest-table-version; it becomes
// last-commit-version (delta.lastUpdateVersion) only when the same request
// changes the metadata: data-only commits leave it where it was.
func TestAddCommitLastCommitVersion(t *testing.T) {
	const commit = `{"action":"add-commit","commit":{"version":4,"timestamp":1700000000004,"file-name":"4.json",` +
		`"file-size":1,"file-modification-timestamp":1},"uniform":{"iceberg":{"metadata-location":"file:///w/t/m4.json"}}}`
	props := map[string]string{PropTableType: Managed, PropLatestVersion: "3", PropLastCommitVersion: "1",
		PropLastCommitTimestamp: "1700000000001", PropProtocol: `{"min-reader-version":1,"min-writer-version":7,"writer-features":["domainMetadata"]}`}
	m, err := table.NewMetadata(iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64}),
		iceberg.UnpartitionedSpec, table.UnsortedSortOrder, "file:///w/t", props)
	require.NoError(t, err)
	for _, tc := range []struct {
		name     string
		with     string // other updates of the request
		metadata bool
	}{
		{"data only", ``, false},
		{"data and backfill", `,{"action":"set-latest-backfilled-version","latest-published-version":3}`, false},
		{"data and domain", `,{"action":"set-domain-metadata","updates":{"app.x":{"a":1}}}`, false},
		{"properties", `,{"action":"set-properties","updates":{"k":"v"}}`, true},
		{"property removal", `,{"action":"remove-properties","removals":["k"]}`, true},
		{"comment", `,{"action":"set-table-comment","comment":"c"}`, true},
		{"protocol", `,{"action":"set-protocol","protocol":{"min-reader-version":1,"min-writer-version":7,"writer-features":["domainMetadata","appendOnly"]}}`, true},
		{"schema", `,{"action":"set-columns","columns":{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"n","type":"string","nullable":true,"metadata":{}}]}}`, true},
		{"partitioning", `,{"action":"set-partition-columns","partition-columns":["id"]}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ups, _, err := translateUpdates(m, parseUpdates(t, `[`+commit+tc.with+`]`))
			require.NoError(t, err)
			set := setProps(t, ups)
			assert.Equal(t, "4", set[PropLatestVersion], "every ratified commit is the latest version")
			if !tc.metadata {
				assert.NotContains(t, set, PropLastCommitVersion)
				assert.NotContains(t, set, PropLastCommitTimestamp)
				return
			}
			assert.Equal(t, "4", set[PropLastCommitVersion])
			assert.Equal(t, "1700000000004", set[PropLastCommitTimestamp])
		})
	}
}
