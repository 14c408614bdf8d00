package embedded

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"go.uber.org/zap"

	"github.com/lakegate/lakegate/upstream/icerest"
)

// maxBody bounds request bodies; table metadata commits are far smaller.
const maxBody = 32 << 20

type handlerFunc func(w http.ResponseWriter, r *http.Request, rt icerest.Route) error

func (c *Catalog) handlers() map[string]handlerFunc {
	return map[string]handlerFunc{
		icerest.OpGetConfig:             c.getConfig,
		icerest.OpGetToken:              c.getToken,
		icerest.OpListNamespaces:        c.listNamespaces,
		icerest.OpCreateNamespace:       c.createNamespace,
		icerest.OpLoadNamespaceMetadata: c.loadNamespace,
		icerest.OpNamespaceExists:       c.namespaceExists,
		icerest.OpDropNamespace:         c.dropNamespace,
		icerest.OpUpdateProperties:      c.updateNamespaceProperties,
		icerest.OpListTables:            c.listTables,
		icerest.OpCreateTable:           c.createTable,
		icerest.OpRegisterTable:         c.registerTable,
		icerest.OpLoadTable:             c.loadTable,
		icerest.OpUpdateTable:           c.updateTable,
		icerest.OpDropTable:             c.dropTable,
		icerest.OpTableExists:           c.tableExists,
		icerest.OpLoadCredentials:       c.loadCredentials,
		icerest.OpReportMetrics:         c.reportMetrics,
		icerest.OpRenameTable:           c.renameTable,
		icerest.OpCommitTransaction:     c.commitTransaction,
		icerest.OpPlanTableScan:         c.planTableScan,
		icerest.OpFetchPlanningResult:   c.fetchPlanningResult,
		icerest.OpCancelPlanning:        c.cancelPlanning,
		icerest.OpFetchScanTasks:        c.fetchScanTasks,
		icerest.OpListViews:             c.listViews,
		icerest.OpCreateView:            c.createView,
		icerest.OpLoadView:              c.loadView,
		icerest.OpReplaceView:           c.replaceView,
		icerest.OpDropView:              c.dropView,
		icerest.OpViewExists:            c.viewExists,
		icerest.OpRenameView:            c.renameView,
		icerest.OpRegisterView:          c.registerView,
		icerest.OpUnregisterTable:       c.unregisterTable,
		icerest.OpListFunctions:         c.listFunctions,
		icerest.OpLoadFunction:          c.loadFunction,
	}
}

// ServeHTTP serves the Iceberg REST Catalog API, both /v1/{prefix}/... (the
// prefix being the catalog name) and the prefix-less /v1/namespaces/... form.
func (c *Catalog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt, rerr := icerest.ParseRoute(r.Method, r.URL.EscapedPath(), c.sep)
	if rerr != nil {
		icerest.WriteError(w, r, rerr)
		return
	}
	if rt.HasPrefix && rt.Prefix != c.cfg.Name {
		icerest.WriteError(w, r, icerest.Errorf(http.StatusNotFound, icerest.NotFound,
			"unknown prefix %q (this catalog is %q)", rt.Prefix, c.cfg.Name))
		return
	}
	if rt.Operation != icerest.OpGetToken {
		if err := c.tokens.authenticate(r); err != nil {
			icerest.WriteError(w, r, err)
			return
		}
	}
	// r.URL.Query() silently drops malformed pairs (parent=%ZZ would list
	// the top level): reject them instead.
	if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
		icerest.WriteError(w, r, icerest.Errorf(http.StatusBadRequest, icerest.BadRequest,
			"malformed query string: %v", err))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	err := checkRoute(rt)
	if err == nil {
		err = c.routeOp[rt.Operation](w, r, rt)
	}
	if err != nil {
		e := c.restError(err, rt)
		icerest.WriteError(w, r, e)
	}
}

// errBadRequest marks errors caused by the request's content.
var errBadRequest = errors.New("bad request")

func badRequest(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errBadRequest, fmt.Sprintf(format, args...))
}

// errRequirementFailed marks a failed commit requirement (409).
var errRequirementFailed = errors.New("requirement failed")

// restError maps catalog errors onto the spec's error model.
func (c *Catalog) restError(err error, rt icerest.Route) error {
	var re *icerest.Error
	if errors.As(err, &re) {
		return re
	}
	var mbe *http.MaxBytesError
	msg := routeMessage(err, rt)
	switch {
	case errors.As(err, &mbe):
		return icerest.Errorf(http.StatusRequestEntityTooLarge, icerest.RequestEntityTooLarge,
			"request body exceeds %d bytes", mbe.Limit)
	case errors.Is(err, catalog.ErrNoSuchTable):
		return icerest.Errorf(http.StatusNotFound, icerest.NoSuchTable, "%s", msg)
	case errors.Is(err, catalog.ErrNoSuchNamespace):
		return icerest.Errorf(http.StatusNotFound, icerest.NoSuchNamespace, "%s", msg)
	case errors.Is(err, catalog.ErrNoSuchView):
		return icerest.Errorf(http.StatusNotFound, icerest.NoSuchView, "%s", msg)
	case errors.Is(err, catalog.ErrTableAlreadyExists), errors.Is(err, catalog.ErrNamespaceAlreadyExists),
		errors.Is(err, catalog.ErrViewAlreadyExists):
		return icerest.Errorf(http.StatusConflict, icerest.AlreadyExists, "%s", msg)
	case errors.Is(err, catalog.ErrNamespaceNotEmpty):
		return icerest.Errorf(http.StatusConflict, icerest.NamespaceNotEmpty, "%s", msg)
	case errors.Is(err, errRequirementFailed), errors.Is(err, table.ErrCommitFailed):
		return icerest.Errorf(http.StatusConflict, icerest.CommitFailed, "%s", msg)
	case errors.Is(err, errValidation):
		return icerest.Errorf(http.StatusBadRequest, icerest.Validation, "%s", msg)
	case errors.Is(err, errBadRequest), errors.Is(err, iceberg.ErrInvalidArgument),
		errors.Is(err, catalog.ErrInvalidIdentifier):
		return icerest.Errorf(http.StatusBadRequest, icerest.BadRequest, "%s", msg)
	}
	c.log.Error("embedded catalog: internal error", zap.String("catalog", c.cfg.Name), zap.Error(err))
	return icerest.Errorf(http.StatusInternalServerError, icerest.InternalServerError, "%v", err)
}

// decodeBody decodes a JSON request body into v; malformed JSON is a 400.
func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		if errors.Is(err, io.EOF) {
			return badRequest("missing request body")
		}
		return badRequest("malformed request body: %v", err)
	}
	// Only whitespace may follow the value. (dec.More() is not enough: it
	// reports no more data before a stray '}' or ']'.)
	var extra json.RawMessage
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
		return nil
	case errors.As(err, new(*http.MaxBytesError)):
		return err
	}
	return badRequest("malformed request body: trailing data after JSON value")
}

// pageParams reads pageToken/pageSize; pageSize 0 means "all".
func pageParams(r *http.Request) (token string, size int, err error) {
	q := r.URL.Query()
	if s := q.Get("pageSize"); s != "" {
		size, err = strconv.Atoi(s)
		if err != nil || size < 1 {
			return "", 0, badRequest("pageSize must be a positive integer, got %q", s)
		}
	}
	return q.Get("pageToken"), size, nil
}

func boolParam(r *http.Request, name string) (bool, error) {
	return boolParamOr(r, name, false)
}

// boolParamOr is boolParam for a parameter whose absence means def.
func boolParamOr(r *http.Request, name string, def bool) (bool, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, badRequest("%s must be true or false, got %q", name, s)
	}
	return b, nil
}

func writeNoContent(w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) }

func ident(ns []string, name string) table.Identifier {
	id := make(table.Identifier, 0, len(ns)+1)
	return append(append(id, ns...), name)
}
