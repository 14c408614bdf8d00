// Package sharing serves the Delta Sharing protocol from Iceberg tables:
// shares are configuration, every read is a LoadTable / scan planning call
// through the Iceberg pipeline of the catalog behind the shared table.
package sharing

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/apache/iceberg-go/table"
	"go.uber.org/zap"

	"github.com/lakegate/lakegate/caller"
	"github.com/lakegate/lakegate/telemetry"
	"github.com/lakegate/lakegate/translate"
	"github.com/lakegate/lakegate/translate/sharing/fileurl"
)

// Target is what an operation addresses, for the front door's policy.
// Catalog, Namespace and IcebergTable are set once a table is resolved.
type Target struct {
	Share, Schema, Table string
	Catalog              string
	Namespace            []string
	IcebergTable         string
	// guessed: IcebergTable is the name as the client spelled it, not
	// yet known to exist (see resolveTable).
	guessed bool
}

// Access decides whether the caller may run op on t; the front door
// implements it (recipient scoping, OPA). Listings call it per item.
type Access func(ctx context.Context, op string, t Target) bool

// Planning chooses who plans a query's files.
type Planning string

const (
	// PlanAuto uses the backend's server-side scan planning when its
	// /v1/config advertises it, else plans in lakegate.
	PlanAuto Planning = "auto"
	// PlanLocal always plans in lakegate over the table's manifests.
	PlanLocal Planning = "local"
)

// Server answers Delta Sharing requests.
type Server struct {
	Shares   []Share
	Catalogs *translate.Catalogs
	// Sealer signs page tokens and local file URLs.
	Sealer *fileurl.Sealer
	// URLLifetime is how long file URLs stay valid (default 1 h).
	URLLifetime time.Duration
	Planning    Planning
	// S3 are FileIO properties (credentials, endpoint, region) used to
	// presign S3 URLs when the table's LoadTable vends none.
	S3 map[string]string
	// MaxVersions bounds the versions one changes request (or a query with
	// startingVersion) may span: each is one metadata file to read
	// (default 1000).
	MaxVersions int
	// ChangeDir is where lakegate writes the change files it derives for
	// versions that rewrote data files (a folder it owns; "" refuses such
	// versions in change ranges).
	ChangeDir string
	// MaxRewriteBytes bounds the data files one such version's derivation
	// reads (default 64 MiB).
	MaxRewriteBytes int64
	// Now is the clock (tests move it).
	Now func() time.Time
	// Log is the handler's logger (nil: none).
	Log *zap.Logger

	metadata metadataCache // historical metadata files, parsed
	plans    planMemo      // files planned locally, per snapshot and hints
}

func (s *Server) log() *zap.Logger {
	if s.Log != nil {
		return s.Log
	}
	return zap.NewNop()
}

func (s *Server) maxVersions() int {
	if s.MaxVersions > 0 {
		return s.MaxVersions
	}
	return defaultMaxVersions
}

const (
	defaultURLLifetime = time.Hour
	pageTokenLifetime  = 24 * time.Hour
	defaultMaxResults  = 500
)

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Server) lifetime() time.Duration {
	if s.URLLifetime > 0 {
		return s.URLLifetime
	}
	return defaultURLLifetime
}

// Request is one call: the route, the caller's access check, the base URL
// files are served under (for local-filesystem warehouses), and the
// principal translated calls run as.
type Request struct {
	Route     Route
	Access    Access
	FilesBase string
	Principal string
}

// allowed asks Access whether the call may reach t; a denial refuses the
// request (its answer is a 404, so no existence oracle), and the access
// log and metrics say so, as for every door's denials. Listings filter
// with Access directly: a hidden entry refuses nothing.
func (req Request) allowed(ctx context.Context, t Target) bool {
	if req.Access(ctx, req.Route.Op, t) {
		return true
	}
	telemetry.From(ctx).Refused()
	return false
}

// Serve answers one request (all operations but OpGetFile).
func (s *Server) Serve(w http.ResponseWriter, r *http.Request, req Request) {
	ctx := caller.With(r.Context(), caller.Caller{Principal: req.Principal}) // a recipient's token never leaves lakegate
	var err error
	switch req.Route.Op {
	case OpListShares:
		err = s.listShares(ctx, w, r, req)
	case OpGetShare:
		err = s.getShare(ctx, w, req)
	case OpListSchemas:
		err = s.listSchemas(ctx, w, r, req)
	case OpListTables, OpListAllTables:
		err = s.listTables(ctx, w, r, req)
	case OpTableVersion:
		err = s.tableVersion(ctx, w, r, req)
	case OpTableMetadata, OpQueryTable, OpQueryChanges:
		err = s.serveTable(ctx, w, r, req)
	default:
		err = notFound("no such operation")
	}
	if err != nil {
		WriteError(w, err)
	}
}

func writeJSON(w http.ResponseWriter, v any) error {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		return Errorf(http.StatusInternalServerError, CodeInternal, "encoding the response: %v", err)
	}
	return nil
}

// identifier is the Iceberg identifier of a resolved target.
func (t Target) identifier() table.Identifier {
	return append(append(table.Identifier{}, t.Namespace...), t.IcebergTable)
}
