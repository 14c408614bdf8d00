package unity

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/lakegate/lakegate/internal/strictjson"
	"github.com/lakegate/lakegate/translate/delta"
	"github.com/lakegate/lakegate/translate/schema"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// CreateTable is createTable's body (UC creates external tables only).
type CreateTable struct {
	Name             *string           `json:"name"`
	CatalogName      *string           `json:"catalog_name"`
	SchemaName       *string           `json:"schema_name"`
	TableType        *string           `json:"table_type"`
	DataSourceFormat *string           `json:"data_source_format"`
	Columns          []ColumnInfo      `json:"columns"`
	StorageLocation  *string           `json:"storage_location"`
	Comment          *string           `json:"comment"`
	Properties       map[string]string `json:"properties"`

	delta *delta.CreateTableRequest
}

// ParseCreateTable reads createTable's body into the Delta API create it
// is: an EXTERNAL Delta table at storage_location, its columns from each
// column's type_json (the Spark field). The engine owns the table's Delta
// log there; the catalog records where it is and what it was told.
func ParseCreateTable(body []byte) (*CreateTable, error) {
	var req CreateTable
	if err := strictjson.Unmarshal(body, &req); err != nil {
		return nil, Errorf(http.StatusBadRequest, InvalidArgument, "malformed CreateTable: %v", err)
	}
	for field, v := range map[string]*string{"name": req.Name, "catalog_name": req.CatalogName, "schema_name": req.SchemaName,
		"table_type": req.TableType, "storage_location": req.StorageLocation} {
		if v == nil || *v == "" {
			return nil, Errorf(http.StatusBadRequest, InvalidArgument, "%s is required", field)
		}
	}
	if *req.TableType != delta.External && *req.TableType != delta.Managed {
		return nil, Errorf(http.StatusBadRequest, InvalidArgument, "table_type %s: createTable makes EXTERNAL and MANAGED tables", *req.TableType)
	}
	if f := req.DataSourceFormat; f != nil && *f != "DELTA" {
		return nil, Errorf(http.StatusBadRequest, UnsupportedTableFormat, "data_source_format %s: lakegate keeps DELTA tables here", *f)
	}
	cols, parts, err := deltaColumns(req.Columns)
	if err != nil {
		return nil, err
	}
	props := req.Properties
	if props == nil {
		props = map[string]string{}
	}
	in := map[string]any{
		"name": *req.Name, "location": fileURL(*req.StorageLocation), "table-type": *req.TableType,
		"columns": cols, "partition-columns": parts, "properties": props,
		"protocol":                 map[string]int{"min-reader-version": 1, "min-writer-version": 2},
		"last-commit-timestamp-ms": time.Now().UnixMilli(),
	}
	if req.Comment != nil {
		in["comment"] = *req.Comment
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	// An EXTERNAL table's log is the engine's (columns may be left to it);
	// a MANAGED one is a staging table's commit (Service.CreateTable).
	parse := delta.ParseRegistration
	if *req.TableType == delta.Managed {
		parse = delta.ParseCreate
	}
	if req.delta, err = parse(raw); err != nil {
		return nil, err
	}
	return &req, nil
}

// CreateTable answers createTable through the Delta API's create.
func (s *Service) CreateTable(ctx context.Context, req *CreateTable) (*TableInfo, error) {
	ref := delta.Ref{Catalog: *req.CatalogName, Namespace: []string{*req.SchemaName}, Name: *req.Name}
	if *req.TableType == delta.Managed {
		// As UC: a managed table is the commit of the staging table at its
		// location, which the Delta API's create finds by that location.
		loc := strings.TrimSuffix(*req.delta.Location, "/")
		st, err := s.tables.StagedAt(ctx, loc)
		if err != nil {
			return nil, err
		}
		if st == nil {
			return nil, Errorf(http.StatusNotFound, TableNotFound,
				"no staging table at %s: a MANAGED table is created at the staging_location createStagingTable answered", loc)
		}
	}
	l, err := s.tables.Create(ctx, ref, req.delta)
	if err != nil {
		if AsError(err).Code == AlreadyExists {
			return nil, Errorf(http.StatusBadRequest, TableAlreadyExists, "Table already exists: %s.%s.%s", ref.Catalog, *req.SchemaName, ref.Name)
		}
		return nil, err
	}
	return s.shown(ctx, ref, l)
}

// deltaColumns turns ColumnInfo into the Delta API's columns (UC dialect)
// and partition columns (by partition_index).
func deltaColumns(cols []ColumnInfo) (json.RawMessage, []string, error) {
	st := schema.StructType{Fields: []schema.StructField{}}
	type part struct {
		index int
		name  string
	}
	var parts []part
	for _, c := range cols {
		if c.TypeJSON == "" {
			return nil, nil, Errorf(http.StatusBadRequest, InvalidArgument, "column %q has no type_json", c.Name)
		}
		one, err := schema.ParseClientStructType([]byte(`{"type":"struct","fields":[` + c.TypeJSON + `]}`))
		if err != nil || len(one.Fields) != 1 || one.Fields[0].Name != c.Name {
			return nil, nil, Errorf(http.StatusBadRequest, InvalidArgument, "column %q: type_json is not that column's Spark field: %v", c.Name, err)
		}
		st.Fields = append(st.Fields, one.Fields[0])
		if c.PartitionIndex != nil {
			parts = append(parts, part{*c.PartitionIndex, c.Name})
		}
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].index < parts[j].index })
	names := make([]string, len(parts))
	for i, p := range parts {
		names[i] = p.name
	}
	raw, err := delta.MarshalColumns(st)
	return raw, names, err
}

// fileURL spells a local path URL as file:///path: Spark and Hadoop write
// file:/path, which is the same place.
func fileURL(loc string) string {
	if strings.HasPrefix(loc, "file:/") && !strings.HasPrefix(loc, "file://") {
		return "file://" + strings.TrimPrefix(loc, "file:")
	}
	return loc
}

// CreateStagingTable is createStagingTable's body.
type CreateStagingTable struct {
	Name        *string `json:"name"`
	CatalogName *string `json:"catalog_name"`
	SchemaName  *string `json:"schema_name"`
}

// StagingTableInfo is createStagingTable's answer: the id the managed
// table will have and the location its data goes to. The client writes
// there, then creates the table (createTable, MANAGED, that location).
type StagingTableInfo struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	CatalogName     string `json:"catalog_name"`
	SchemaName      string `json:"schema_name"`
	StagingLocation string `json:"staging_location"`
}

// ParseCreateStagingTable reads createStagingTable's body and returns the
// Delta API's staging request it is (its body: the name), so the Delta
// API's staging store serves both APIs.
func ParseCreateStagingTable(body []byte) (*CreateStagingTable, []byte, error) {
	var req CreateStagingTable
	if err := strictjson.Unmarshal(body, &req); err != nil {
		return nil, nil, Errorf(http.StatusBadRequest, InvalidArgument, "malformed CreateStagingTable: %v", err)
	}
	for _, f := range []struct {
		field string
		v     *string
	}{{"name", req.Name}, {"catalog_name", req.CatalogName}, {"schema_name", req.SchemaName}} {
		if f.v == nil || *f.v == "" {
			return nil, nil, Errorf(http.StatusBadRequest, InvalidArgument, "%s is required", f.field)
		}
		if p := icerest.NameProblem(*f.v); p != "" || strings.Contains(*f.v, ".") {
			return nil, nil, Errorf(http.StatusBadRequest, InvalidArgument, "invalid %s %q: a name of one level", f.field, *f.v)
		}
	}
	raw, err := json.Marshal(map[string]string{"name": *req.Name})
	return &req, raw, err
}

// StagingInfo is the Delta API's staging answer in UC's model.
func StagingInfo(req *CreateStagingTable, st *delta.StagingTableResponse) *StagingTableInfo {
	return &StagingTableInfo{ID: st.TableID, Name: *req.Name, CatalogName: *req.CatalogName,
		SchemaName: *req.SchemaName, StagingLocation: st.Location}
}
