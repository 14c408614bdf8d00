package delta

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakegate/lakegate/translate"
	"github.com/lakegate/lakegate/translate/schema"
)

// Service runs Delta API operations as Iceberg operations on the
// catalogs' pipelines. The caller (the front door) has authenticated and
// authorized the request and put the caller on ctx (caller.With).
type Service struct {
	// catalogs are the catalogs' pipelines as the doors reach them,
	// through the log sync stage: Load answers with them, so a table
	// whose truth is a Delta log is synced before it is answered.
	catalogs *translate.Catalogs
	// own are the same pipelines beneath the log sync stage: every other
	// call of the translator's, the sync's own among them, so a sync
	// never re-enters the stage and the Delta API's own writes to an
	// EXTERNAL table are not refused as Iceberg writes.
	own   *translate.Catalogs
	store Store
	// StagedTTL is how long a staging table waits for its create.
	StagedTTL time.Duration
	// CredentialTTL is the expiration-time-ms lakegate reports for vended
	// credentials whose own expiry the catalog does not state.
	CredentialTTL time.Duration
	// VendsPaths says getTemporaryPathCredentials can vend (the front
	// door has sources configured), so getConfig lists it.
	VendsPaths bool
	now        func() time.Time
}

// NewService translates onto p (the doors' pipelines) and beneath (the
// same beneath the log sync stage), keeping shared state in store.
func NewService(p, beneath translate.Pipelines, store Store) *Service {
	return &Service{
		catalogs: translate.NewCatalogs(p), own: translate.NewCatalogs(beneath),
		store: store, StagedTTL: 24 * time.Hour, CredentialTTL: time.Hour, now: time.Now,
	}
}

// Catalogs is how the service reaches the catalogs' pipelines, shared with
// the translator of UC's catalog, schema and table API.
func (s *Service) Catalogs() *translate.Catalogs { return s.catalogs }

// Ref names a table: lakegate catalog, namespace levels, table name.
type Ref struct {
	Catalog   string
	Namespace []string
	Name      string
}

// ParseSchema decodes the {schema} path segment into namespace levels:
// levels are separated by the unit separator 0x1F (%1F, as in Iceberg
// REST) when the name contains one, else by ".". So "sales" is one level,
// "a.b" two, and "a.b\x1fc" the two levels "a.b" and "c".
func ParseSchema(s string) ([]string, error) {
	sep := "."
	if strings.Contains(s, "\x1f") {
		sep = "\x1f"
	}
	levels := strings.Split(s, sep)
	for _, l := range levels {
		if l == "" || l == "." || l == ".." {
			return nil, badRequest("invalid schema name %q: empty or relative namespace level", s)
		}
	}
	return levels, nil
}

// client is catalog's client for the translator's own calls, beneath
// the log sync stage.
func (s *Service) client(_ context.Context, catalog string) (*icebergClient, error) {
	return clientOf(s.own, catalog)
}

// served is catalog's client as the doors reach it, through the log sync
// stage: for the loads the Delta API answers with.
func (s *Service) served(catalog string) (*icebergClient, error) {
	return clientOf(s.catalogs, catalog)
}

func clientOf(cats *translate.Catalogs, catalog string) (*icebergClient, error) {
	cl, err := cats.Client(catalog)
	if err != nil {
		return nil, catalogError(catalog, err)
	}
	return &icebergClient{cl}, nil
}

// Etag is the Delta etag of an Iceberg table version: a digest of its
// metadata location, which changes on every commit.
func Etag(metadataLocation string) string {
	sum := sha256.Sum256([]byte(metadataLocation))
	return hex.EncodeToString(sum[:16])
}

// Load answers loadTable (and UC's getTable and listTables) from a load
// through the log sync stage: a table whose truth is a Delta log answers
// its log's latest version.
func (s *Service) Load(ctx context.Context, ref Ref) (*LoadTableResponse, error) {
	l, err := s.load(ctx, ref)
	if err != nil {
		return nil, err
	}
	return response(l)
}

// load is the table as the doors see it, refused when it has no Delta side.
func (s *Service) load(ctx context.Context, ref Ref) (*loaded, error) {
	c, err := s.served(ref.Catalog)
	if err != nil {
		return nil, err
	}
	l, err := c.load(ctx, ref.Namespace, ref.Name, false)
	if err != nil {
		return nil, err
	}
	return l, deltaTable(l.Metadata.Properties(), ref)
}

// exists answers tableExists.
func (s *Service) exists(ctx context.Context, ref Ref) error {
	_, err := s.deltaClient(ctx, ref)
	return notFoundIfNotDelta(err)
}

// Delete answers deleteTable (an Iceberg drop without purge: the files
// stay, as dropping a UC table's metadata does not delete external data).
func (s *Service) Delete(ctx context.Context, ref Ref) error {
	c, err := s.deltaClient(ctx, ref)
	if err != nil {
		return notFoundIfNotDelta(err)
	}
	return c.drop(ctx, ref.Namespace, ref.Name)
}

// notFoundIfNotDelta answers a table with no Delta side with 404 where the
// spec lists no 400 for the operation (tableExists, deleteTable; a HEAD
// answer has no body to carry UnsupportedTableFormat anyway): in this
// API's model no Delta table has that name.
func notFoundIfNotDelta(err error) error {
	if e := AsError(err); err != nil && e.Type == UnsupportedTableFormat {
		return Errorf(http.StatusNotFound, NoSuchTable, "%s", e.Message)
	}
	return err
}

// rename answers renameTable, within the table's schema.
func (s *Service) rename(ctx context.Context, ref Ref, req *RenameRequest) error {
	c, err := s.deltaClient(ctx, ref)
	if err != nil || *req.NewName == ref.Name {
		// A rename to the table's own name is a no-op, as UC answers it
		// (Iceberg catalogs would say the destination exists).
		return err
	}
	return c.rename(ctx, ref.Namespace, ref.Name, *req.NewName)
}

// deltaClient is the catalog's client once ref is known to name a Delta
// table, decided as load decides (deltaTable), so the Delta API does not
// drop or rename a table it would refuse to load. Only the properties are
// read: a Delta table whose metadata lakegate cannot otherwise parse can
// still be dropped. (A table replaced meanwhile through Iceberg is acted
// on as the catalog has it then; Iceberg has no conditional drop.)
func (s *Service) deltaClient(ctx context.Context, ref Ref) (*icebergClient, error) {
	c, err := s.client(ctx, ref.Catalog)
	if err != nil {
		return nil, err
	}
	p, err := c.peek(ctx, ref.Namespace, ref.Name)
	if err != nil {
		return nil, err
	}
	return c, deltaTable(p.Properties, ref)
}

// response builds a DeltaLoadTableResponse from an Iceberg table.
func response(l *loaded) (*LoadTableResponse, error) {
	m := l.Metadata
	props := map[string]string(m.Properties())
	st, err := toDelta(m.CurrentSchema(), props)
	if err != nil {
		return nil, Errorf(http.StatusBadRequest, UnsupportedTableFormat,
			"the table's Iceberg schema has no Delta equivalent: %v", err)
	}
	cols, err := MarshalColumns(st)
	if err != nil {
		return nil, err
	}
	tt := props[PropTableType]
	if tt == "" {
		tt = Managed // the catalog owns a table created through Iceberg
	}
	out := &LoadTableResponse{
		Metadata: TableMetadata{
			Etag: Etag(l.MetadataLocation), TableType: tt, TableUUID: m.TableUUID().String(),
			Location: m.Location(), CreatedTime: createdTime(m), UpdatedTime: m.LastUpdatedMillis(),
			Columns: cols, PartitionColumns: schema.PartitionColumns(m.PartitionSpec(), m.CurrentSchema()),
			Properties:            deltaProperties(props),
			LastCommitVersion:     int64Prop(props, PropLastCommitVersion),
			LastCommitTimestampMs: int64Prop(props, PropLastCommitTimestamp),
			Comment:               props[PropComment],
		},
		Commits: unbackfilledOrEmpty(props),
		Uniform: uniformOf(l.MetadataLocation, props),
	}
	if v, ok := latestVersion(props); ok || tt != External {
		out.LatestTableVersion = &v
	}
	return out, nil
}

// uniformOf is the load response's uniform: present only for UniForm
// tables (created from, or last committed with, an engine's Iceberg
// metadata), as the spec has it, with the Delta version that metadata
// converts and when; delta-spark refuses a uniform without them. A table
// whose Delta commits lakegate translates itself is no UniForm table.
func uniformOf(current string, props map[string]string) *Uniform {
	if props[PropLatestUniform] == "" {
		return nil
	}
	v, _ := latestVersion(props)
	ts := int64Prop(props, PropConvertedTimestamp)
	if ts == nil {
		ts = int64Prop(props, PropLastCommitTimestamp)
	}
	return &Uniform{Iceberg: &UniformIceberg{MetadataLocation: current, ConvertedDeltaVersion: &v, ConvertedDeltaTimestamp: ts}}
}

// unbackfilledOrEmpty is the response's commits: never null.
func unbackfilledOrEmpty(props map[string]string) []Commit {
	if c := unbackfilled(props); c != nil {
		return c
	}
	return []Commit{}
}

// latestVersion is the newest Delta version the server has ratified or
// been told of (update-metadata-snapshot-version, UniForm's converted
// version); ok is false when it has none, which for an EXTERNAL table
// means the answer has no latest-table-version (UC answers none: the log
// is the truth), and for a MANAGED one means version 0.
func latestVersion(props map[string]string) (v int64, ok bool) {
	for _, key := range []string{PropLatestVersion, PropLastCommitVersion} {
		if n := int64Prop(props, key); n != nil {
			v, ok = max(v, *n), true
		}
	}
	return v, ok
}

// deltaTable refuses a table that has no Delta side: one created through
// Iceberg, not through this API (or registered from UniForm metadata
// through it). The spec's answer tells clients to fall back to the UC API.
func deltaTable(props map[string]string, ref Ref) error {
	if _, ok := props[PropTableType]; ok {
		return nil
	}
	return Errorf(http.StatusBadRequest, UnsupportedTableFormat,
		"table %s is an Iceberg table without a Delta log (not created through the Delta API nor from UniForm metadata)",
		qualified(ref.Namespace, ref.Name))
}

// createdTime is the time of the table's first metadata file still in the
// metadata log, else of the current one.
func createdTime(m table.Metadata) int64 {
	for e := range m.PreviousFiles() {
		return e.TimestampMs
	}
	return m.LastUpdatedMillis()
}

// Create answers createTable: an Iceberg create, or the commit of a staging
// table allocated at the same location, or (uniform) a register of the
// Iceberg metadata the engine already wrote.
func (s *Service) Create(ctx context.Context, ref Ref, req *CreateTableRequest) (*LoadTableResponse, error) {
	c, err := s.client(ctx, ref.Catalog)
	if err != nil {
		return nil, err
	}
	ice, err := schema.FromDelta(req.columns)
	if err != nil {
		return nil, invalidParam("columns: %v", err)
	}
	spec, err := schema.IdentitySpec(ice, req.PartitionColumns)
	if err != nil {
		return nil, invalidParam("%v", err)
	}
	ex, err := extras(req.columns, ice)
	if err != nil {
		return nil, err
	}
	props, err := createProperties(req, ex)
	if err != nil {
		return nil, err
	}
	if err := s.checkLocation(ctx, c, ref, *req.Name, strings.TrimSuffix(*req.Location, "/")); err != nil {
		return nil, err
	}
	if req.Uniform != nil {
		if v := req.Uniform.Iceberg.ConvertedDeltaVersion; v != nil {
			// The engine's table already has Delta versions up to this one.
			props[PropLatestVersion] = strconv.FormatInt(*v, 10)
		}
		props[PropLatestUniform] = req.Uniform.Iceberg.MetadataLocation
		props[PropConvertedTimestamp] = strconv.FormatInt(*req.LastCommitTimestampMs, 10)
		if ts := req.Uniform.Iceberg.ConvertedDeltaTimestamp; ts != nil {
			props[PropConvertedTimestamp] = strconv.FormatInt(*ts, 10)
		}
		return s.createUniform(ctx, c, ref, *req.Name, req.Uniform.Iceberg.MetadataLocation, req.columns, props)
	}
	staged, err := s.StagedAt(ctx, strings.TrimSuffix(*req.Location, "/"))
	if err != nil {
		return nil, err
	}
	if staged != nil {
		return s.commitStaged(ctx, c, ref, *req.Name, staged, ice, spec, props)
	}
	l, err := c.create(ctx, ref.Namespace, createBody{Name: *req.Name, Location: *req.Location,
		Schema: ice, PartitionSpec: &spec, Properties: props}, false)
	if err != nil {
		return nil, err
	}
	return s.registered(ctx, c, Ref{Catalog: ref.Catalog, Namespace: ref.Namespace, Name: *req.Name}, l)
}

// registered answers a create. A table whose truth is a Delta log (an
// EXTERNAL table registered by its location, often without columns) is
// read from its log at once, by a load through the log sync stage as
// every door's: the create's answer, and every reader after it, show the
// log's columns and files, not what the create said. A log lakegate
// cannot show undoes the registration: the table would fail every load.
func (s *Service) registered(ctx context.Context, c *icebergClient, ref Ref, l *loaded) (*LoadTableResponse, error) {
	if !logSynced(l.Metadata.Properties()) {
		return response(l)
	}
	synced, err := s.load(ctx, ref)
	if err == nil {
		return response(synced)
	}
	e := AsError(err)
	if e.Code == http.StatusNotAcceptable { // what Iceberg cannot show
		e = invalidParam("the Delta log at %s cannot be registered: %s", l.Metadata.Location(), e.Message)
	}
	if derr := c.drop(ctx, ref.Namespace, ref.Name); derr != nil {
		return nil, Errorf(e.Code, e.Type, "%s (and the table stays registered: dropping it failed: %s)", e.Message, AsError(derr).Message)
	}
	return nil, e
}

// StagedAt is the staging table allocated at location (no trailing
// slash), nil when none is: UC's createTable of a MANAGED table must name
// one, where the Delta API's create need not.
func (s *Service) StagedAt(ctx context.Context, location string) (*Staged, error) {
	st, err := s.store.StagedByLocation(ctx, location)
	if err != nil {
		return nil, Errorf(http.StatusServiceUnavailable, InternalServerError, "staging table store: %v", err)
	}
	return st, nil
}

// UCTableIDProperty is where Unity Catalog's clients repeat the staging
// table's id in a create.
const UCTableIDProperty = "io.unitycatalog.tableId"

// commitStaged creates a staging table's table with assert-create, keeping
// the table-id the client was given.
func (s *Service) commitStaged(ctx context.Context, c *icebergClient, ref Ref, name string, st *Staged,
	ice *iceberg.Schema, spec iceberg.PartitionSpec, props map[string]string) (*LoadTableResponse, error) {
	if st.Catalog != ref.Catalog || strings.Join(st.Namespace, "\x1f") != strings.Join(ref.Namespace, "\x1f") || st.Name != name {
		return nil, invalidParam("location %s belongs to staging table %s (%s.%s); create it under that name",
			st.Location, st.TableID, strings.Join(st.Namespace, "."), st.Name)
	}
	if v, ok := props[UCTableIDProperty]; ok && !strings.EqualFold(v, st.TableID) {
		return nil, invalidParam("property %s=%s does not match the staging table %s at location %s", UCTableIDProperty, v, st.TableID, st.Location)
	}
	id, err := parseUUID(st.TableID)
	if err != nil {
		return nil, err
	}
	ups := []table.Update{
		table.NewAssignUUIDUpdate(id), table.NewUpgradeFormatVersionUpdate(2),
		table.NewAddSchemaUpdate(ice), table.NewSetCurrentSchemaUpdate(-1),
		table.NewAddPartitionSpecUpdate(&spec, true), table.NewSetDefaultSpecUpdate(-1),
		table.NewAddSortOrderUpdate(&table.UnsortedSortOrder), table.NewSetDefaultSortOrderUpdate(-1),
		table.NewSetLocationUpdate(st.Location), table.NewSetPropertiesUpdate(props),
	}
	l, err := c.commit(ctx, ref.Namespace, name, []table.Requirement{table.AssertCreate()}, ups, AlreadyExists)
	if err != nil {
		return nil, err
	}
	_ = s.store.DeleteStaged(ctx, *st) // expires anyway; the table now exists
	return s.registered(ctx, c, Ref{Catalog: ref.Catalog, Namespace: ref.Namespace, Name: name}, l)
}

// createUniform registers the Iceberg metadata a UniForm engine wrote, then
// records the Delta-only state in its properties. The column extras are
// keyed by the registered schema's field ids, matched to the Delta columns
// by name: the engine's ids need not be the fresh ids Create assigned.
func (s *Service) createUniform(ctx context.Context, c *icebergClient, ref Ref, name, loc string,
	cols schema.StructType, props map[string]string) (*LoadTableResponse, error) {
	l, err := c.register(ctx, ref.Namespace, name, loc, false)
	if err != nil {
		return nil, err
	}
	delete(props, PropColumns)
	if matched, err := evolve(l.Metadata.CurrentSchema(), l.Metadata.LastColumnID(), cols, nil, false); err == nil {
		// (columns the metadata cannot hold as given keep no extras: its
		// schema is what the table has)
		ex, err := extras(cols, matched)
		if err != nil {
			return nil, err
		}
		if ex != "" {
			props[PropColumns] = ex
		}
	}
	l, err = c.commit(ctx, ref.Namespace, name,
		[]table.Requirement{table.AssertTableUUID(l.Metadata.TableUUID())},
		[]table.Update{table.NewSetPropertiesUpdate(props)}, UpdateRequirementConflict)
	if err != nil {
		return nil, err
	}
	return response(l)
}

// config answers getConfig: protocol 1.0 is the only version lakegate
// speaks; endpoints are those it serves for the catalog.
func (s *Service) config(ctx context.Context, catalog, versions string) (*configResponse, error) {
	if catalog == "" {
		return nil, invalidParam("catalog is required")
	}
	if versions == "" {
		return nil, invalidParam("protocol-versions is required")
	}
	ok, err := supportsV1(versions)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, invalidParam("no common protocol version: lakegate speaks 1.0, the client offered %q", versions)
	}
	if _, err := s.client(ctx, catalog); err != nil {
		return nil, err
	}
	endpoints := Endpoints
	if s.VendsPaths {
		endpoints = append(slices.Clone(endpoints), PathCredentialsEndpoint)
	}
	return &configResponse{Endpoints: endpoints, ProtocolVersion: "1.0"}, nil
}

// PathCredentialsEndpoint is listed only where path credentials are
// configured: elsewhere it answers 501.
const PathCredentialsEndpoint = "GET /v1/temporary-path-credentials"

// Endpoints are the Delta API endpoints lakegate always serves.
var Endpoints = []string{
	"POST /v1/catalogs/{catalog}/schemas/{schema}/staging-tables",
	"POST /v1/catalogs/{catalog}/schemas/{schema}/tables",
	"GET /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}",
	"POST /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}",
	"DELETE /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}",
	"HEAD /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}",
	"POST /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}/rename",
	"GET /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}/credentials",
	"POST /v1/catalogs/{catalog}/schemas/{schema}/tables/{table}/metrics",
	"GET /v1/staging-tables/{table_id}/credentials",
}

// supportsV1 reads "1.1,2.3": the highest minor per major the client speaks.
func supportsV1(versions string) (bool, error) {
	found := false
	for _, v := range strings.Split(versions, ",") {
		major, minor, ok := strings.Cut(strings.TrimSpace(v), ".")
		mj, err1 := strconv.Atoi(major)
		_, err2 := strconv.Atoi(minor)
		if !ok || err1 != nil || err2 != nil || mj < 0 {
			return false, invalidParam("protocol-versions: %q is not MAJOR.MINOR", v)
		}
		found = found || mj == 1
	}
	return found, nil
}
