package sharing

import (
	"context"

	"github.com/apache/iceberg-go/table"
)

// OpenTable is catalog's table ns.name as this server reads shared
// tables: loaded through the catalog's pipeline, its files read where
// the catalog's allowed locations permit. The gateway's table preview
// uses it; the caller has decided access. Its error is an *Error.
func (s *Server) OpenTable(ctx context.Context, catalog string, ns []string, name string) (*table.Table, error) {
	l, err := s.load(ctx, Target{Catalog: catalog, Namespace: ns, IcebergTable: name, Table: name})
	if err != nil {
		return nil, err
	}
	return l.tbl, nil
}
