package delta

import (
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/translate/schema"
)

// set-columns keeps a column's field id when its column-mapping identity
// says it is the same column, whatever its name now; non-nullable columns
// cannot be added to a table with rows.
func TestEvolveMatchesColumns(t *testing.T) {
	cur := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "a", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "b", Type: iceberg.PrimitiveTypes.Int32},
	)
	mapped := map[string]string{PropColumns: `{"2":{"metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-a"}},` +
		`"3":{"metadata":{"delta.columnMapping.id":3,"delta.columnMapping.physicalName":"col-b"}}}`}
	const idCol = `{"name":"id","type":"long","nullable":false,"metadata":{}}`
	for _, tc := range []struct {
		name    string
		props   map[string]string
		hasData bool
		fields  string
		want    map[string]int // column name → field id
		err     string
	}{
		{"rename by physical name", mapped, true,
			idCol + `,{"name":"a2","type":"string","nullable":true,"metadata":{"delta.columnMapping.physicalName":"col-a"}},{"name":"b","type":"integer","nullable":true,"metadata":{"delta.columnMapping.id":3}}`,
			map[string]int{"id": 1, "a2": 2, "b": 3}, ""},
		{"rename by mapping id", mapped, true,
			idCol + `,{"name":"renamed","type":"string","nullable":true,"metadata":{"delta.columnMapping.id":2}}`,
			map[string]int{"id": 1, "renamed": 2}, ""},
		{"names swapped", mapped, true,
			idCol + `,{"name":"b","type":"string","nullable":true,"metadata":{"delta.columnMapping.id":2}},{"name":"a","type":"integer","nullable":true,"metadata":{"delta.columnMapping.id":3}}`,
			map[string]int{"id": 1, "b": 2, "a": 3}, ""},
		{"new column takes an old name", mapped, true,
			idCol + `,{"name":"x","type":"string","nullable":true,"metadata":{"delta.columnMapping.id":2}},{"name":"a","type":"long","nullable":true,"metadata":{}}`,
			map[string]int{"id": 1, "x": 2, "a": 4}, ""},
		{"by name without mapping", nil, true,
			idCol + `,{"name":"A","type":"string","nullable":true,"metadata":{}},{"name":"c","type":"double","nullable":true,"metadata":{}}`,
			map[string]int{"id": 1, "A": 2, "c": 4}, ""},
		{"required column on empty table", nil, false,
			idCol + `,{"name":"c","type":"long","nullable":false,"metadata":{}}`,
			map[string]int{"id": 1, "c": 4}, ""},
		{"required column in a new struct", nil, true,
			idCol + `,{"name":"s","type":{"type":"struct","fields":[{"name":"x","type":"long","nullable":false,"metadata":{}}]},"nullable":true,"metadata":{}}`,
			map[string]int{"id": 1, "s": 4}, ""},
		{"required column with data", nil, true,
			idCol + `,{"name":"c","type":"long","nullable":false,"metadata":{}}`,
			nil, `column "c": a non-nullable column cannot be added to a table with data (its existing rows have no value)`},
		{"renamed column changes type", mapped, true,
			idCol + `,{"name":"z","type":"date","nullable":true,"metadata":{"delta.columnMapping.id":3}}`,
			nil, `column "z": Iceberg cannot change type int to date`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cols, err := schema.ParseColumns([]byte(`{"type":"struct","fields":[` + tc.fields + `]}`))
			require.NoError(t, err)
			got, err := evolve(cur, 3, cols, tc.props, tc.hasData)
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			ids := map[string]int{}
			for _, f := range got.Fields() {
				ids[f.Name] = f.ID
			}
			assert.Equal(t, tc.want, ids)
		})
	}
}
