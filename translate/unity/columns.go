package unity

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/lakegate/lakegate/translate/delta"
	"github.com/lakegate/lakegate/translate/schema"
)

// tableInfo describes a table loaded through the Delta translator.
func tableInfo(ref delta.Ref, l *delta.LoadTableResponse) (*TableInfo, error) {
	m := l.Metadata
	cols, err := columns(m.Columns, m.PartitionColumns)
	if err != nil {
		return nil, err
	}
	return &TableInfo{
		Name: ref.Name, CatalogName: ref.Catalog, SchemaName: ref.Namespace[0],
		TableType: m.TableType, DataSourceFormat: "DELTA", Columns: cols,
		StorageLocation: m.Location, Comment: m.Comment, Properties: m.Properties,
		CreatedAt: m.CreatedTime, UpdatedAt: m.UpdatedTime, TableID: m.TableUUID,
	}, nil
}

// columns turns the Delta API's columns into UC's ColumnInfo: type_json is
// the field as Spark writes it, type_text its SQL type.
func columns(raw json.RawMessage, partitions []string) ([]ColumnInfo, error) {
	st, err := schema.ParseColumns(raw)
	if err != nil {
		return nil, Errorf(http.StatusBadGateway, Internal, "the table's columns: %v", err)
	}
	out := make([]ColumnInfo, len(st.Fields))
	for i, f := range st.Fields {
		js, err := json.Marshal(f)
		if err != nil {
			return nil, Errorf(http.StatusBadGateway, Internal, "column %q: %v", f.Name, err)
		}
		c := ColumnInfo{Name: f.Name, TypeText: schema.SQL(f.Type), TypeJSON: string(js),
			TypeName: schema.TypeName(f.Type), Position: i, Nullable: f.Nullable}
		if d, ok := f.Type.(schema.DecimalType); ok {
			c.TypePrecision, c.TypeScale = &d.Precision, &d.Scale
		}
		if s, ok := f.Metadata["comment"].(string); ok {
			c.Comment = s
		}
		if p := slices.Index(partitions, f.Name); p >= 0 {
			c.PartitionIndex = &p
		}
		out[i] = c
	}
	return out, nil
}
