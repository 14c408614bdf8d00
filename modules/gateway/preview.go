package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"
	"go.uber.org/zap"

	"github.com/lakegate/lakegate/apierror"
	"github.com/lakegate/lakegate/policies"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// previewPath answers a table's first rows, read by the gateway from the
// warehouse (where it can: the catalog's FileIO properties and vended
// credentials, within its allowed locations).
const previewPath = "/lakegate/preview"

// opPreview is the operation the policy is asked about: reading rows
// through the gateway is more than loadTable (a reader without storage
// credentials would otherwise get data), so it is an operation of its
// own, which roles.rego grants admins only.
const opPreview = "previewTable"

// Preview limits: rows by default and at most.
const (
	previewDefaultRows = 10
	previewMaxRows     = 100
)

// previewAnswer is GET /lakegate/preview's answer.
type previewAnswer struct {
	Columns []string          `json:"columns"`
	Rows    []json.RawMessage `json:"rows"`
}

// servePreview answers GET /lakegate/preview?catalog=&namespace=&table=&limit=
// (namespace levels joined by the unit separator, %1F, as in Iceberg
// paths): authenticated as every Iceberg request, allowed when the policy
// lets the caller previewTable on that table.
func (h *IcebergHandler) servePreview(w http.ResponseWriter, r *http.Request) {
	x, r := begin(h.app, w, r, "iceberg")
	defer x.end()
	x.rec.SetOperation(opPreview)
	p, r, ok := icebergDoor.admit(h.app.guard, x, r)
	if !ok {
		return
	}
	if r.Method != http.MethodGet {
		e := icerest.Errorf(http.StatusMethodNotAllowed, icerest.UnsupportedOperation,
			"method %s not allowed on %s (allowed: GET)", r.Method, previewPath)
		e.Allow = []string{http.MethodGet}
		icerest.WriteError(x, r, e)
		return
	}
	q, cat, rerr := h.previewQuery(r)
	if rerr != nil {
		icerest.WriteError(x, r, rerr)
		return
	}
	noteCatalog(r, cat)
	if d := h.app.guard.decide(r, policyRequest{op: opPreview, principal: p, catalog: cat,
		resource: policies.Resource{Namespace: q.namespace, Table: q.table}}); !d.Allow {
		icerest.WriteError(x, r, forbidden(opPreview, d))
		return
	}
	tbl, err := h.reader.OpenTable(r.Context(), cat.cfg.Name, q.namespace, q.table)
	if err != nil {
		icerest.WriteError(x, r, asIcebergError(err))
		return
	}
	out, err := firstRows(r, tbl, q.limit)
	if err != nil {
		// Storage errors name paths and may echo what a signer sent: the
		// cause goes to the log, as the sharing door's do.
		h.reader.Log.Error("reading a table's rows for a preview failed", zap.String("catalog", cat.cfg.Name),
			zap.Strings("namespace", q.namespace), zap.String("table", q.table), zap.Error(err))
		icerest.WriteError(x, r, icerest.Errorf(http.StatusBadGateway, icerest.ServiceUnavailable,
			"reading the table's rows failed (the cause is in the server's log)"))
		return
	}
	icerest.WriteJSON(x, http.StatusOK, out)
}

type previewQuery struct {
	tableQuery
	limit int64
}

func (h *IcebergHandler) previewQuery(r *http.Request) (previewQuery, *catalogState, error) {
	t, cat, err := h.tableQuery(r)
	if err != nil {
		return previewQuery{}, nil, err
	}
	q := previewQuery{tableQuery: t, limit: previewDefaultRows}
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 || n > previewMaxRows {
			return previewQuery{}, nil, icerest.Errorf(http.StatusBadRequest, icerest.BadRequest,
				"limit must be a number from 1 to %d, not %q", previewMaxRows, s)
		}
		q.limit = n
	}
	return q, cat, nil
}

// tableQuery is the table a /lakegate/ read names in its query.
type tableQuery struct {
	namespace []string
	table     string
}

// tableQuery reads ?catalog=&namespace=&table= (namespace levels joined
// by the unit separator, %1F, as in Iceberg paths): 400 for a missing
// name or one no catalog can hold, 404 for a catalog the gateway does
// not serve.
func (h *IcebergHandler) tableQuery(r *http.Request) (tableQuery, *catalogState, error) {
	v := r.URL.Query()
	q := tableQuery{table: v.Get("table")}
	if ns := v.Get("namespace"); ns != "" {
		q.namespace = strings.Split(ns, icerest.UnitSeparator)
	}
	if len(q.namespace) == 0 || q.table == "" {
		return tableQuery{}, nil, icerest.Errorf(http.StatusBadRequest, icerest.BadRequest, "catalog, namespace and table are required")
	}
	if err := checkIdentifier(append(append([]string{}, q.namespace...), q.table)...); err != nil {
		return tableQuery{}, nil, err
	}
	cat, ok := h.app.catalog(v.Get("catalog"))
	if !ok {
		return tableQuery{}, nil, icerest.Errorf(http.StatusNotFound, icerest.NoSuchWarehouse, "no catalog named %q", v.Get("catalog"))
	}
	return q, cat, nil
}

// firstRows scans tbl's current snapshot for limit rows, as JSON objects.
func firstRows(r *http.Request, tbl *table.Table, limit int64) (previewAnswer, error) {
	out := previewAnswer{Columns: []string{}, Rows: []json.RawMessage{}}
	for _, f := range tbl.Schema().Fields() {
		out.Columns = append(out.Columns, f.Name)
	}
	if tbl.CurrentSnapshot() == nil {
		return out, nil
	}
	_, batches, err := tbl.Scan(table.WithLimit(limit)).ToArrowRecords(r.Context())
	if err != nil {
		return out, err
	}
	var buf bytes.Buffer
	for rec, err := range batches {
		if err != nil {
			return out, err
		}
		buf.Reset()
		err = array.RecordToJSON(rec, &buf)
		rec.Release()
		if err != nil {
			return out, err
		}
		for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
			if len(line) > 0 && int64(len(out.Rows)) < limit {
				out.Rows = append(out.Rows, json.RawMessage(bytes.Clone(line)))
			}
		}
		if int64(len(out.Rows)) >= limit {
			break
		}
	}
	return out, nil
}

// asIcebergError answers a table reader's error (the Delta Sharing door's
// model) in the Iceberg one: the same status and message.
func asIcebergError(err error) error {
	var e *apierror.Error
	if errors.As(err, &e) {
		typ := icerest.ServiceUnavailable
		switch e.Code {
		case http.StatusNotFound:
			typ = icerest.NoSuchTable
		case http.StatusForbidden:
			typ = icerest.Forbidden
		case http.StatusBadRequest:
			typ = icerest.BadRequest
		}
		return icerest.Errorf(e.Code, typ, "%s", e.Message)
	}
	return icerest.Errorf(http.StatusBadGateway, icerest.ServiceUnavailable, "%v", err)
}
