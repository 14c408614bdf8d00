package delta

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/lakegate/lakegate/caller"
	"github.com/lakegate/lakegate/translate"
	"github.com/lakegate/lakegate/upstream/locations"
)

// moveToUniform handles add-commit with uniform.iceberg.metadata-location:
// the UniForm engine wrote the Iceberg metadata for its Delta commit, and
// the table moves to it (register with overwrite). The new metadata must
// descend from the current one (its metadata log names the current file)
// and keep the table uuid; if not, the move is undone and the client gets
// 409, as for any concurrent commit.
func (s *Service) moveToUniform(ctx context.Context, c *icebergClient, ref Ref, cur *loaded, u *Update) (*loaded, error) {
	loc := u.Uniform.Iceberg.MetadataLocation
	if loc == cur.MetadataLocation {
		return cur, nil // the catalog is already at that metadata: nothing to move
	}
	next, err := c.register(ctx, ref.Namespace, ref.Name, loc, true)
	if err != nil {
		return nil, err
	}
	if reason := chainBreak(cur, next); reason != "" {
		return nil, moveBack(ctx, c, ref, cur,
			Errorf(http.StatusConflict, CommitVersionConflict, "add-commit rejected: %s", reason))
	}
	return next, nil
}

// moveBack re-registers the table at cur after a move that must not stand,
// and returns cause; if the table cannot be moved back, the commit's state
// is unknown to the client.
func moveBack(ctx context.Context, c *icebergClient, ref Ref, cur *loaded, cause error) error {
	if _, err := c.register(ctx, ref.Namespace, ref.Name, cur.MetadataLocation, true); err != nil {
		return Errorf(http.StatusInternalServerError, CommitStateUnknown,
			"%s, and moving the table back to %s failed: %v", AsError(cause).Message, cur.MetadataLocation, err)
	}
	return cause
}

// chainBreak says why next is not a successor of cur ("" when it is).
func chainBreak(cur, next *loaded) string {
	if next.Metadata.TableUUID() != cur.Metadata.TableUUID() {
		return "the uniform metadata belongs to another table (uuid " + next.Metadata.TableUUID().String() + ")"
	}
	for e := range next.Metadata.PreviousFiles() {
		if e.MetadataFile == cur.MetadataLocation {
			return ""
		}
	}
	return "the uniform metadata " + next.MetadataLocation + " does not descend from the current metadata " + cur.MetadataLocation
}

// credentials answers getTableCredentials: what the catalog vends for the
// table (LoadTable storage-credentials, else its /credentials endpoint),
// labelled with the operation asked for. Iceberg vends one set per table;
// the front door has checked the caller may write before asking READ_WRITE.
func (s *Service) credentials(ctx context.Context, ref Ref, op string) (*CredentialsResponse, error) {
	if op != Read && op != ReadWrite {
		return nil, invalidParam("operation must be READ or READ_WRITE, got %q", op)
	}
	c, err := s.client(ctx, ref.Catalog)
	if err != nil {
		return nil, err
	}
	l, err := c.load(ctx, ref.Namespace, ref.Name, true)
	if err != nil {
		return nil, err
	}
	if err := deltaTable(l.Metadata.Properties(), ref); err != nil {
		return nil, err
	}
	creds := l.Credentials
	if len(creds) == 0 {
		if creds, err = c.credentials(ctx, ref.Namespace, ref.Name); err != nil && AsError(err).Code != http.StatusNotFound {
			return nil, err
		}
	}
	return &CredentialsResponse{StorageCredentials: s.deltaCredentials(creds, op)}, nil
}

// iceberg → Delta credential config keys; others pass through unchanged.
var credentialKeys = map[string]string{
	"gcs.oauth2.token": "gcs.oauth-token",
}

// expiryKeys are where Iceberg catalogs state a credential's expiry (ms).
var expiryKeys = []string{"s3.session-token-expires-at-ms", "gcs.oauth2.token-expires-at", "adls.sas-token-expires-at-ms"}

// Credentials is creds (Iceberg FileIO configs, as an Iceberg catalog
// vends them) as the Delta API's answer for operation op: what the
// front door vends itself (a catalog whose storage block vends) is
// answered in the same model as what a catalog vends.
func (s *Service) Credentials(creds []translate.StorageCredential, op string) *CredentialsResponse {
	return &CredentialsResponse{StorageCredentials: s.deltaCredentials(creds, op)}
}

func (s *Service) deltaCredentials(creds []translate.StorageCredential, op string) []StorageCredential {
	out := []StorageCredential{}
	for _, c := range creds {
		cfg := map[string]string{}
		exp := s.now().Add(s.CredentialTTL).UnixMilli()
		for k, v := range c.Config {
			if n, ok := expiry(k, v); ok {
				exp = n
				continue
			}
			if strings.HasPrefix(k, "adls.sas-token.") {
				cfg["azure.sas-token"] = v
				continue
			}
			if dk, ok := credentialKeys[k]; ok {
				k = dk
			}
			cfg[k] = v
		}
		out = append(out, StorageCredential{Prefix: credentialPrefix(c.Prefix), Operation: op, Config: cfg, ExpirationTimeMs: exp})
	}
	return out
}

// credentialPrefix is a vended credential's prefix as Delta clients match
// it: as a string, the longest prefix a path starts with. Iceberg catalogs
// name a table's location without a trailing slash, so "s3://b/m1" would
// also cover the sibling "s3://b/m10" (another table, or the path another
// table will be created at), and "s3://b" the bucket "s3://b-2". A prefix
// that is a location (a bucket root is one with its slash) therefore ends
// in "/", covering only what lies below it, as the spec's example does;
// one that is no location (empty, a bare scheme) is left as the catalog
// wrote it.
func credentialPrefix(p string) string {
	if p == "" || strings.HasSuffix(p, "/") || locations.Valid(p+"/") != nil {
		return p
	}
	return p + "/"
}

func expiry(k, v string) (int64, bool) {
	for _, e := range expiryKeys {
		if k == e || strings.HasPrefix(k, e+".") {
			n, err := strconv.ParseInt(v, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// metrics answers reportMetrics as an Iceberg commit-report for the
// table's current snapshot; the table must be a Delta table (as load
// decides) and the body's table-id must be the table's.
func (s *Service) metrics(ctx context.Context, ref Ref, req *MetricsRequest) error {
	c, err := s.client(ctx, ref.Catalog)
	if err != nil {
		return err
	}
	l, err := c.load(ctx, ref.Namespace, ref.Name, false)
	if err != nil {
		return err
	}
	if err := deltaTable(l.Metadata.Properties(), ref); err != nil {
		return err // a plain Iceberg table gets no Delta commit reports
	}
	if !strings.EqualFold(*req.TableID, l.Metadata.TableUUID().String()) {
		return invalidParam("table-id %s does not identify %s (its uuid is %s)", *req.TableID, ref.Name, l.Metadata.TableUUID())
	}
	return c.reportMetrics(ctx, ref.Namespace, ref.Name, commitReport(ref, l.Metadata, req))
}

// metricNames maps Delta commit-report counters onto Iceberg's.
var metricNames = map[string][2]string{
	"num-files-added":   {"added-data-files", "count"},
	"num-bytes-added":   {"added-files-size-bytes", "bytes"},
	"num-files-removed": {"removed-data-files", "count"},
	"num-bytes-removed": {"removed-files-size-bytes", "bytes"},
	"num-rows-inserted": {"added-records", "count"},
	"num-rows-removed":  {"removed-records", "count"},
}

func commitReport(ref Ref, m table.Metadata, req *MetricsRequest) map[string]any {
	metrics, meta := map[string]any{}, map[string]string{"source": "delta"}
	if req.Report != nil {
		for k, raw := range req.Report.CommitReport {
			var n int64
			if name, ok := metricNames[k]; ok && json.Unmarshal(raw, &n) == nil {
				metrics[name[0]] = map[string]any{"unit": name[1], "value": n}
				continue
			}
			meta["delta."+k] = string(raw) // no Iceberg counterpart: kept as report metadata
		}
	}
	snap, seq := int64(-1), int64(0)
	if cs := m.CurrentSnapshot(); cs != nil {
		snap, seq = cs.SnapshotID, cs.SequenceNumber
	}
	return map[string]any{
		"report-type": "commit-report", "table-name": strings.Join(append(slices.Clone(ref.Namespace), ref.Name), "."),
		"snapshot-id": snap, "sequence-number": seq, "operation": "delta-commit",
		"metrics": metrics, "metadata": meta,
	}
}

// stage answers createStagingTable: an Iceberg stage-create allocates the
// uuid and location (nothing is created), and the staging table is kept
// in the store by table-id until a create at its location commits it.
func (s *Service) stage(ctx context.Context, ref Ref, req *StagingTableRequest) (*StagingTableResponse, error) {
	c, err := s.client(ctx, ref.Catalog)
	if err != nil {
		return nil, err
	}
	// The catalog's default location for the name, made the table's own
	// with a suffix: two staging tables of one name (two writers racing
	// to create it) must not share a location, which is how a create
	// finds its staging table. The second stage-create vends credentials
	// for that location.
	l, err := c.create(ctx, ref.Namespace, createBody{Name: *req.Name, Schema: iceberg.NewSchema(0), StageCreate: true}, false)
	if err != nil {
		return nil, err
	}
	loc := strings.TrimSuffix(l.Metadata.Location(), "/") + "-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
	l, err = c.create(ctx, ref.Namespace, createBody{Name: *req.Name, Location: loc, Schema: iceberg.NewSchema(0), StageCreate: true}, true)
	if err != nil {
		return nil, err
	}
	st := Staged{TableID: l.Metadata.TableUUID().String(), Catalog: ref.Catalog, Namespace: ref.Namespace,
		Name: *req.Name, Location: strings.TrimSuffix(l.Metadata.Location(), "/"), Principal: caller.From(ctx).Principal}
	if err := s.store.PutStaged(ctx, st, s.StagedTTL); err != nil {
		return nil, Errorf(http.StatusServiceUnavailable, InternalServerError, "staging table store: %v", err)
	}
	return &StagingTableResponse{
		TableID: st.TableID, TableType: Managed, Location: st.Location,
		StorageCredentials: s.deltaCredentials(l.Credentials, ReadWrite),
		RequiredProtocol:   defaultProtocol, RequiredProperties: stagingProperties(),
	}, nil
}

// stagedTable looks a staging table up by id (404 when unknown or expired;
// an id that is no UUID names no staging table either).
func (s *Service) stagedTable(ctx context.Context, id string) (*Staged, error) {
	if _, err := uuid.Parse(id); err != nil {
		return nil, Errorf(http.StatusNotFound, NoSuchTable, "no staging table %q: staging table ids are UUIDs", id)
	}
	st, err := s.store.StagedByID(ctx, id)
	if err != nil {
		return nil, Errorf(http.StatusServiceUnavailable, InternalServerError, "staging table store: %v", err)
	}
	if st == nil {
		return nil, Errorf(http.StatusNotFound, NoSuchTable, "no staging table %s (never staged, expired, or already created)", id)
	}
	return st, nil
}

// stagingCredentials answers getStagingTableCredentials: READ_WRITE
// credentials for the staged location, vended anew by repeating the
// stage-create (which creates nothing).
func (s *Service) stagingCredentials(ctx context.Context, st *Staged) (*CredentialsResponse, error) {
	c, err := s.client(ctx, st.Catalog)
	if err != nil {
		return nil, err
	}
	l, err := c.create(ctx, st.Namespace, createBody{Name: st.Name, Location: st.Location,
		Schema: iceberg.NewSchema(0), StageCreate: true}, true)
	if err != nil {
		return nil, err
	}
	return &CredentialsResponse{StorageCredentials: s.deltaCredentials(l.Credentials, ReadWrite)}, nil
}

// pathCredentials answers getTemporaryPathCredentials: credentials for a
// storage path where a new external table will be created. Iceberg REST
// vends credentials only for tables, so they are vended the way the
// catalog vends a new table's: a stage-create at that location (which
// creates nothing) in namespace ns of the catalog, under a name derived
// from the path. A catalog that vends nothing there answers 501.
func (s *Service) pathCredentials(ctx context.Context, catalog string, ns []string, loc, op string) (*CredentialsResponse, error) {
	if op != Read && op != ReadWrite {
		return nil, invalidParam("operation must be READ or READ_WRITE, got %q", op)
	}
	if err := CheckLocationSyntax(loc); err != nil {
		return nil, err
	}
	c, err := s.client(ctx, catalog)
	if err != nil {
		return nil, err
	}
	// Credentials for a path inside another table would reach that
	// table's files past its own policy: the path must be apart from the
	// namespace's tables, as a create's location must.
	sum := sha256.Sum256([]byte(loc))
	name := "lakegate_path_" + hex.EncodeToString(sum[:8])
	if err := s.checkLocation(ctx, c, Ref{Catalog: catalog, Namespace: ns}, name, loc); err != nil {
		return nil, err
	}
	l, err := c.create(ctx, ns, createBody{Name: name, Location: loc, Schema: iceberg.NewSchema(0), StageCreate: true}, true)
	if err != nil {
		return nil, err
	}
	if len(l.Credentials) == 0 {
		return nil, notImplemented("temporary path credentials: catalog %q vends no storage credentials for %s", catalog, loc)
	}
	return &CredentialsResponse{StorageCredentials: s.deltaCredentials(l.Credentials, op)}, nil
}

// stagingProperties are what lakegate requires of a managed table's
// writer, because its data commits become Iceberg v2 snapshots
// (datacommit.go): no deletion vectors, which they cannot reference, and
// no row tracking, whose materialized row-id columns in rewritten files
// are columns no Iceberg schema holds (PyIceberg refuses to read such
// files). delta-spark 4.3 turns row tracking on for catalog-managed tables
// unless the catalog says otherwise.
func stagingProperties() map[string]*string {
	off := "false"
	return map[string]*string{"delta.enableDeletionVectors": &off, "delta.enableRowTracking": &off}
}
