package delta

import (
	"context"
	"net/http"
	"net/url"

	"github.com/lakegate/lakegate/upstream/icerest"
)

// Request is a Delta API request parsed once, before the policy is asked:
// the names the policy decides on (Checks) are the ones the operation then
// uses (Serve). JSON keys match struct fields case-insensitively, so
// reading a name from the raw body could differ from what the decoder
// takes.
type Request struct {
	Route
	query url.Values

	create  *CreateTableRequest
	staging *StagingTableRequest
	update  *UpdateTableRequest
	rename  *RenameRequest
	metrics *MetricsRequest

	staged *Staged // getStagingTableCredentials, by Resolve
	vend   *vendSource
}

// vendSource is where getTemporaryPathCredentials vends from.
type vendSource struct {
	catalog   string
	namespace []string
}

// ParseRequest parses the query and body of a request for rt and
// validates what can be validated without a catalog.
func ParseRequest(rt Route, query url.Values, body []byte) (*Request, error) {
	q := &Request{Route: rt, query: query}
	var err error
	switch rt.Op {
	case OpCreateTable:
		q.create, err = ParseCreate(body)
	case OpCreateStagingTable:
		q.staging, err = parseStaging(body)
	case OpUpdateTable:
		q.update, err = parseUpdate(body)
	case OpRenameTable:
		q.rename, err = parseRename(body)
	case OpReportMetrics:
		q.metrics, err = parseMetrics(body)
	case OpGetTableCredentials:
		if op := q.Operation(); op != Read && op != ReadWrite {
			return nil, invalidParam("operation must be READ or READ_WRITE, got %q", op)
		}
	case OpGetTemporaryPathCredentials:
		loc, op := q.Location(), query.Get("operation")
		if loc == "" {
			return nil, Errorf(http.StatusBadRequest, InvalidParameterValue, "location is required")
		}
		if op != Read && op != ReadWrite {
			return nil, Errorf(http.StatusBadRequest, InvalidParameterValue, "operation must be READ or READ_WRITE, got %q", op)
		}
	}
	if err != nil {
		return nil, err
	}
	return q, nil
}

// Location is the storage location getTemporaryPathCredentials asks for.
func (q *Request) Location() string { return q.query.Get("location") }

// Operation is the access getTableCredentials and
// getTemporaryPathCredentials ask for: READ or READ_WRITE (validated).
func (q *Request) Operation() string { return q.query.Get("operation") }

// VendFrom names the catalog and its existing namespace that
// getTemporaryPathCredentials vends through; the front door's
// configuration picks them for the location.
func (q *Request) VendFrom(catalog string, namespace []string) {
	q.vend = &vendSource{catalog: catalog, namespace: namespace}
}

// Resolve looks up what a request's checks depend on that the request
// does not carry: the table a staging table's id names.
func (s *Service) Resolve(ctx context.Context, q *Request) error {
	if q.Op != OpGetStagingTableCredentials {
		return nil
	}
	st, err := s.stagedTable(ctx, q.TableID)
	if err != nil {
		return err
	}
	q.staged = st
	return nil
}

// Check is one decision the policy must allow before the operation runs:
// the UC operation (api_operation), the Iceberg operation decided, and
// the resource.
type Check struct {
	Op      Op
	Iceberg string
	Catalog string
	// IfCatalog: asked only when Catalog names a configured catalog
	// (getConfig answers an unknown catalog itself).
	IfCatalog bool
	Namespace []string
	Table     string
	Location  string
}

// Checks lists every resource the operation touches: both names of a
// rename, write access for READ_WRITE credentials (they let the caller
// change the table's files), the staged table behind a staging table's
// id, and createTable on a temporary path (the catalog vends what it
// vends for a new table there, which READ cannot narrow).
func (q *Request) Checks() []Check {
	c := Check{Op: q.Op, Iceberg: q.Iceberg, Catalog: q.Catalog, Namespace: q.Namespace, Table: q.Table}
	switch {
	case q.Op == OpGetConfig:
		return []Check{{Op: q.Op, Iceberg: q.Iceberg, Catalog: q.query.Get("catalog"), IfCatalog: true}}
	case q.Op == OpGetTemporaryPathCredentials:
		if q.vend == nil {
			return nil
		}
		c = Check{Op: q.Op, Iceberg: q.Iceberg, Catalog: q.vend.catalog, Namespace: q.vend.namespace, Location: q.Location()}
		create := c
		create.Iceberg = icerest.OpCreateTable
		return []Check{c, create}
	case q.Op == OpGetStagingTableCredentials:
		if q.staged == nil {
			return nil
		}
		c.Catalog, c.Namespace, c.Table = q.staged.Catalog, q.staged.Namespace, q.staged.Name
	case q.create != nil:
		c.Table = *q.create.Name
	case q.staging != nil:
		c.Table = *q.staging.Name
	case q.rename != nil:
		to := c
		to.Table = *q.rename.NewName
		return []Check{c, to}
	case q.Op == OpGetTableCredentials && q.query.Get("operation") == ReadWrite:
		write := c
		write.Iceberg = icerest.OpUpdateTable
		return []Check{c, write}
	}
	return []Check{c}
}

// Serve runs an authorized request: the status to answer with (204 when
// out is nil, else 200 and out as JSON), or the error.
func (s *Service) Serve(ctx context.Context, q *Request) (status int, out any, err error) {
	ref := Ref{Catalog: q.Catalog, Namespace: q.Namespace, Name: q.Table}
	switch q.Op {
	case OpGetConfig:
		out, err = s.config(ctx, q.query.Get("catalog"), q.query.Get("protocol-versions"))
	case OpCreateTable:
		out, err = s.Create(ctx, ref, q.create)
	case OpCreateStagingTable:
		out, err = s.stage(ctx, ref, q.staging)
	case OpLoadTable:
		out, err = s.Load(ctx, ref)
	case OpUpdateTable:
		out, err = s.update(ctx, ref, q.update)
	case OpDeleteTable:
		err = s.Delete(ctx, ref)
	case OpTableExists:
		err = s.exists(ctx, ref)
	case OpRenameTable:
		err = s.rename(ctx, ref, q.rename)
	case OpGetTableCredentials:
		out, err = s.credentials(ctx, ref, q.query.Get("operation"))
	case OpReportMetrics:
		err = s.metrics(ctx, ref, q.metrics)
	case OpGetStagingTableCredentials:
		if q.staged == nil {
			return 0, nil, Errorf(http.StatusInternalServerError, InternalServerError, "staging table %q was not resolved", q.TableID)
		}
		out, err = s.stagingCredentials(ctx, q.staged)
	case OpGetTemporaryPathCredentials:
		if q.vend == nil {
			return 0, nil, notImplemented("temporary path credentials have no catalog to vend through")
		}
		out, err = s.pathCredentials(ctx, q.vend.catalog, q.vend.namespace, q.Location(), q.query.Get("operation"))
	}
	switch {
	case err != nil:
		return 0, nil, err
	case out == nil:
		return http.StatusNoContent, nil, nil
	}
	return http.StatusOK, out, nil
}
