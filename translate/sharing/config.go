package sharing

import (
	"fmt"
	"strings"
)

// Share is one share as configured: schemas of tables, each table an
// Iceberg table of a lakegate catalog.
type Share struct {
	// Name is the share's name, unique case-insensitively (required).
	Name string `json:"name"`
	// Comment is shown to recipients (default: none).
	Comment string `json:"comment,omitempty"`
	// Schemas are what the share holds (default: none).
	Schemas []Schema `json:"schemas"`
}

// Schema groups shared tables. Tables lists tables one by one; Namespaces
// shares every table of whole namespaces, under the table's own name.
type Schema struct {
	// Name is the schema's name, unique in its share (required).
	Name string `json:"name"`
	// Tables are tables shared one by one (default: none; a schema needs
	// a table or a namespace).
	Tables []TableRef `json:"tables,omitempty"`
	// Namespaces are namespaces shared whole (default: none).
	Namespaces []NamespaceRef `json:"namespaces,omitempty"`
}

// TableRef is one shared table: Name as recipients see it, and the
// Iceberg table behind it.
type TableRef struct {
	// Name is the table as recipients see it, unique in its schema
	// (required).
	Name string `json:"name"`
	// Catalog is the lakegate catalog holding the table (required).
	Catalog string `json:"catalog"`
	// Namespace is the table's namespace, one level per item (required).
	Namespace []string `json:"namespace"`
	// Table is the Iceberg table's name (required).
	Table string `json:"table"`
}

// NamespaceRef is a whole shared namespace.
type NamespaceRef struct {
	// Catalog is the lakegate catalog holding the namespace (required).
	Catalog string `json:"catalog"`
	// Namespace is the namespace, one level per item (required).
	Namespace []string `json:"namespace"`
}

// Validate checks names are present and unique (case-insensitively: the
// protocol's names are case-insensitive) and every reference is complete.
func Validate(shares []Share) error {
	seen := map[string]bool{}
	for _, sh := range shares {
		if err := uniqueName(seen, "share", sh.Name); err != nil {
			return err
		}
		schemas := map[string]bool{}
		for _, sc := range sh.Schemas {
			if err := uniqueName(schemas, "schema "+sh.Name+".", sc.Name); err != nil {
				return err
			}
			if err := validateSchema(sh.Name, sc); err != nil {
				return err
			}
		}
	}
	return nil
}

func validateSchema(share string, sc Schema) error {
	where := share + "." + sc.Name
	if len(sc.Tables) == 0 && len(sc.Namespaces) == 0 {
		return fmt.Errorf("schema %s shares no table and no namespace", where)
	}
	tables := map[string]bool{}
	for _, t := range sc.Tables {
		if err := uniqueName(tables, "table "+where+".", t.Name); err != nil {
			return err
		}
		if t.Catalog == "" || len(t.Namespace) == 0 || t.Table == "" {
			return fmt.Errorf("table %s.%s needs a catalog, a namespace and a table", where, t.Name)
		}
	}
	for _, n := range sc.Namespaces {
		if n.Catalog == "" || len(n.Namespace) == 0 {
			return fmt.Errorf("schema %s: a shared namespace needs a catalog and a namespace", where)
		}
	}
	return nil
}

func uniqueName(seen map[string]bool, what, name string) error {
	if name == "" || len(name) > 255 || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("%s name %q: must be 1-255 characters without '/'", what, name)
	}
	key := strings.ToLower(name)
	if seen[key] {
		return fmt.Errorf("%s %q is configured twice (names are case-insensitive)", what, name)
	}
	seen[key] = true
	return nil
}

// share finds a share by its case-insensitive name.
func findShare(shares []Share, name string) (*Share, bool) {
	for i := range shares {
		if strings.EqualFold(shares[i].Name, name) {
			return &shares[i], true
		}
	}
	return nil, false
}

func (sh *Share) schema(name string) (*Schema, bool) {
	for i := range sh.Schemas {
		if strings.EqualFold(sh.Schemas[i].Name, name) {
			return &sh.Schemas[i], true
		}
	}
	return nil, false
}
