package unity

// The UC API's models (api/all.yaml components), the fields lakegate
// fills. Fields lakegate has no value for (owners, ids of schemas and
// catalogs, creation times of namespaces) are left out, as the spec
// allows: every field of these models is optional.

// CatalogInfo is a lakegate catalog.
type CatalogInfo struct {
	Name       string            `json:"name"`
	Comment    string            `json:"comment,omitempty"`
	Properties map[string]string `json:"properties"`
}

// ListCatalogsResponse is one page of catalogs.
type ListCatalogsResponse struct {
	Catalogs      []CatalogInfo `json:"catalogs"`
	NextPageToken string        `json:"next_page_token,omitempty"`
}

// SchemaInfo is an Iceberg namespace of one level.
type SchemaInfo struct {
	Name        string            `json:"name"`
	CatalogName string            `json:"catalog_name"`
	FullName    string            `json:"full_name"`
	Comment     string            `json:"comment,omitempty"`
	Properties  map[string]string `json:"properties"`
	StorageRoot string            `json:"storage_root,omitempty"`
}

// CreateSchema is createSchema's body.
type CreateSchema struct {
	Name        *string           `json:"name"`
	CatalogName *string           `json:"catalog_name"`
	Comment     *string           `json:"comment"`
	Properties  map[string]string `json:"properties"`
	StorageRoot *string           `json:"storage_root"`
}

// ListSchemasResponse is one page of schemas.
type ListSchemasResponse struct {
	Schemas       []SchemaInfo `json:"schemas"`
	NextPageToken string       `json:"next_page_token,omitempty"`
}

// ColumnInfo is one top-level column.
type ColumnInfo struct {
	Name           string `json:"name"`
	TypeText       string `json:"type_text"`
	TypeJSON       string `json:"type_json"`
	TypeName       string `json:"type_name"`
	TypePrecision  *int   `json:"type_precision,omitempty"`
	TypeScale      *int   `json:"type_scale,omitempty"`
	Position       int    `json:"position"`
	Comment        string `json:"comment,omitempty"`
	Nullable       bool   `json:"nullable"`
	PartitionIndex *int   `json:"partition_index,omitempty"`
}

// TableInfo is a table with a Delta side.
type TableInfo struct {
	Name             string            `json:"name"`
	CatalogName      string            `json:"catalog_name"`
	SchemaName       string            `json:"schema_name"`
	TableType        string            `json:"table_type"`
	DataSourceFormat string            `json:"data_source_format"`
	Columns          []ColumnInfo      `json:"columns"`
	StorageLocation  string            `json:"storage_location"`
	Comment          string            `json:"comment,omitempty"`
	Properties       map[string]string `json:"properties"`
	CreatedAt        int64             `json:"created_at"`
	UpdatedAt        int64             `json:"updated_at"`
	TableID          string            `json:"table_id"`
}

// ListTablesResponse is one page of tables.
type ListTablesResponse struct {
	Tables        []TableInfo `json:"tables"`
	NextPageToken string      `json:"next_page_token,omitempty"`
}
