package sharing

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	// iceberg-go (since v0.7) opens s3:// paths only once this is linked:
	// shared tables on S3 are read (metadata, manifests) through it.
	_ "github.com/apache/iceberg-go/io/gocloud/s3"
	"github.com/apache/iceberg-go/table"

	"github.com/lakegate/lakegate/storage"
	"github.com/lakegate/lakegate/translate"
	"github.com/lakegate/lakegate/translate/delta"
	"github.com/lakegate/lakegate/translate/deltalog"
	"github.com/lakegate/lakegate/translate/sharing/fileurl"
	"github.com/lakegate/lakegate/upstream/icerest"
	"github.com/lakegate/lakegate/upstream/locations"
)

// resolveTable finds the route's table: named in the schema, or a table
// of a shared namespace. With one shared namespace, the name as the client
// spelled it is tried first (no listing: the load that follows tells);
// else, or when that load finds nothing, the namespace is listed and the
// name matched case-insensitively, as the protocol's names are.
func (s *Server) resolveTable(ctx context.Context, req Request) (Target, error) {
	sh, sc, err := s.schema(ctx, req)
	if err != nil {
		return Target{}, err
	}
	want := req.Route.Table
	for _, t := range sc.Tables {
		if strings.EqualFold(t.Name, want) {
			return s.authorized(ctx, req, Target{Share: sh.Name, Schema: sc.Name, Table: t.Name,
				Catalog: t.Catalog, Namespace: t.Namespace, IcebergTable: t.Table})
		}
	}
	if len(sc.Namespaces) == 1 {
		ns := sc.Namespaces[0]
		t, err := s.authorized(ctx, req, Target{Share: sh.Name, Schema: sc.Name, Table: want,
			Catalog: ns.Catalog, Namespace: ns.Namespace, IcebergTable: want})
		t.guessed = err == nil
		return t, err
	}
	return s.listedTable(ctx, req, sh, sc)
}

// listedTable finds the route's table by listing the shared namespaces.
func (s *Server) listedTable(ctx context.Context, req Request, sh *Share, sc *Schema) (Target, error) {
	want := req.Route.Table
	for _, ns := range sc.Namespaces {
		idents, err := s.namespaceTables(ctx, ns)
		if err != nil {
			return Target{}, err
		}
		if name, ok := pickName(idents, want); ok {
			return s.authorized(ctx, req, Target{Share: sh.Name, Schema: sc.Name, Table: name,
				Catalog: ns.Catalog, Namespace: ns.Namespace, IcebergTable: name})
		}
	}
	return Target{}, notFound("table %q does not exist in schema %q of share %q", want, sc.Name, sh.Name)
}

func pickName(idents []table.Identifier, want string) (string, bool) {
	found := ""
	for _, id := range idents {
		name := id[len(id)-1]
		if name == want {
			return name, true
		}
		if found == "" && strings.EqualFold(name, want) {
			found = name
		}
	}
	return found, found != ""
}

func (s *Server) authorized(ctx context.Context, req Request, t Target) (Target, error) {
	if !req.allowed(ctx, t) {
		return Target{}, notFound("table %q does not exist in schema %q of share %q", t.Table, t.Schema, t.Share)
	}
	return t, nil
}

// loaded is a shared table as LoadTable returned it, with the FileIO
// properties (vended credentials) its files are read or presigned with.
type loaded struct {
	target Target
	tbl    *table.Table
	props  iceberg.Properties
	// log is the table's Delta log when it is the table's truth (an
	// EXTERNAL Delta table, see logtable.go), else nil; latest is its
	// latest snapshot once logHistory has read it.
	log    *deltalog.Log
	latest *deltalog.Snapshot
	// places are the table's locations on S3 when its catalog's storage
	// keys are the gateway's (storage.Within): only files under them get
	// a URL presigned with those keys. nil for other catalogs.
	places []storage.Place
}

// load runs LoadTable through the catalog's pipeline (so it is served
// from the LoadTable cache when fresh), asking for vended credentials.
// It calls the pipeline directly rather than through rest.Catalog because
// presigning needs the FileIO properties the response carries.
func (s *Server) load(ctx context.Context, t Target) (*loaded, error) {
	res, rerr := s.loadRaw(ctx, t)
	if rerr != nil {
		return nil, rerr
	}
	meta := res.Metadata.Metadata
	if meta == nil {
		return nil, Errorf(http.StatusBadGateway, CodeInternal, "the catalog returned unreadable table metadata: %v", res.Metadata.Err)
	}
	props := iceberg.Properties{}
	for k, v := range s.S3 {
		props[k] = v
	}
	for k, v := range res.Config {
		props[k] = v
	}
	for _, c := range res.Credentials {
		if strings.HasPrefix(meta.Location(), c.Prefix) {
			for k, v := range c.Config {
				props[k] = v
			}
		}
	}
	// A catalog whose storage keys are the gateway's vends none (its
	// answers are stripped): its files are read, and their URLs presigned,
	// with its storage keys, confined to the table's own locations.
	var places []storage.Place
	if keys := s.Catalogs.StorageProperties(t.Catalog); keys != nil {
		for k, v := range keys {
			props[k] = v
		}
		mp := meta.Properties()
		places = storage.TableLocations(meta.Location(), mp["write.data.path"], mp["write.metadata.path"])
		if len(places) == 0 {
			return nil, Errorf(http.StatusForbidden, CodePermissionDenied,
				"the table's location is not on its catalog's S3 storage")
		}
	}
	// The table's files are read where their locations spell, as
	// recipients' URLs serve them (fileurl.LocalPath).
	rawF := iceio.LoadFSFunc(props, res.MetadataLocation)
	fsF := fileurl.LiteralIOFunc(rawF)
	if rule := s.Catalogs.Locations(t.Catalog); rule != nil {
		// Only files under the catalog's allowed locations are read, or
		// served, whatever the metadata names.
		if !rule.Allows(meta.Location()) {
			return nil, Errorf(http.StatusForbidden, CodePermissionDenied,
				"the table's location is outside its catalog's allowed locations")
		}
		fsF = locations.ConfineFunc(fsF, rule)
		rawF = locations.ConfineFunc(rawF, rule)
	}
	tbl := table.New(t.identifier(), meta, res.MetadataLocation, fsF, nil)
	l := &loaded{target: t, tbl: tbl, props: props, places: places}
	if delta.LogIsTruth(meta.Properties()) {
		// The log's paths are URIs it decodes itself (deltalog.ResolvePath),
		// so it reads through the plain (confined) file system, which also
		// lists _delta_log.
		fsys, err := rawF(ctx)
		if err != nil {
			return nil, s.storageError(err, "opening the storage of table %q failed", t.Table)
		}
		l.log = deltalog.New(strings.TrimSuffix(meta.Location(), "/"), fsys)
	}
	return l, nil
}

var vendedCredentials = http.Header{"X-Iceberg-Access-Delegation": {"vended-credentials"}}

func (s *Server) loadRaw(ctx context.Context, t Target) (*translate.LoadedTable, error) {
	cl, err := s.Catalogs.Client(t.Catalog)
	if err != nil {
		return nil, backendError(err)
	}
	resp, err := cl.Do(ctx, translate.Call{
		Route:  icerest.Route{Operation: icerest.OpLoadTable, Namespace: t.Namespace, Table: t.IcebergTable},
		Header: vendedCredentials.Clone(),
	})
	if err != nil {
		return nil, backendError(err)
	}
	if resp.Status != http.StatusOK {
		return nil, loadStatusError(resp.Status, resp.Body, t)
	}
	var res translate.LoadedTable
	if err := json.Unmarshal(resp.Body, &res); err != nil {
		return nil, Errorf(http.StatusBadGateway, CodeInternal, "the catalog returned an unreadable LoadTable answer: %v", err)
	}
	return &res, nil
}

func loadStatusError(status int, body []byte, t Target) *Error {
	var e struct {
		Error struct{ Message string } `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	switch {
	case status == http.StatusNotFound:
		return notFound("table %q: the catalog no longer has %s (%s)", t.Table, strings.Join(t.identifier(), "."), e.Error.Message)
	case status == http.StatusServiceUnavailable:
		return Errorf(status, CodeUnavailable, "the catalog of table %q is unavailable: %s", t.Table, e.Error.Message)
	case status == http.StatusForbidden || status == http.StatusUnauthorized:
		return Errorf(http.StatusForbidden, CodePermissionDenied, "the catalog refused to load table %q: %s", t.Table, e.Error.Message)
	}
	return Errorf(http.StatusBadGateway, CodeInternal, "loading table %q failed with %d: %s", t.Table, status, e.Error.Message)
}
