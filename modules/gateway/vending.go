package gateway

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/lakegate/lakegate/identity"
	"github.com/lakegate/lakegate/policies"
	"github.com/lakegate/lakegate/storage"
	"github.com/lakegate/lakegate/telemetry"
	"github.com/lakegate/lakegate/translate"
	"github.com/lakegate/lakegate/upstream"
	"github.com/lakegate/lakegate/upstream/icerest"
	"github.com/lakegate/lakegate/upstream/locations"
)

// vending is a catalog's credential vendor (storage.vended_credentials)
// and the credentials it vended recently. They are reused per principal
// (its id and groups), table, access and the table's locations for
// decision_ttl: a client that loads a table often (an engine plans every
// query) does not cost an STS call each time, and STS's AssumeRole rate
// limit is not spent on it. One principal's credentials are never
// another's: the key names the principal.
type vending struct {
	vendor *storage.Vendor
	s3     storage.S3Config // endpoint, region, path style (its secrets unused here)
	cache  *expirable.LRU[string, storage.Credentials]
}

// vendMargin is the least lifetime credentials handed out still have:
// decision_ttl (at most 10m) is shorter than the shortest lifetime (15m)
// by at least this, and a reused entry closer to its expiry is vended
// again.
const vendMargin = 5 * time.Minute

// newVending builds cc's vendor (its secrets resolved), or nil when it
// vends nothing.
func newVending(cc CatalogConfig) (*vending, error) {
	if cc.Storage == nil || cc.Storage.VendedCredentials == nil {
		return nil, nil
	}
	if err := cc.Storage.Check(); err != nil {
		return nil, err
	}
	v, err := storage.NewVendor(*cc.Storage.S3, *cc.Storage.VendedCredentials)
	if err != nil {
		return nil, err
	}
	s3 := *cc.Storage.S3
	s3.AccessKeyID, s3.SecretAccessKey, s3.SessionToken = "", "", ""
	return &vending{vendor: v, s3: s3,
		cache: expirable.NewLRU[string, storage.Credentials](maxSignDecisions, nil, cc.Storage.TTL())}, nil
}

// Access delegation modes of X-Iceberg-Access-Delegation.
const (
	delegateSigning = "remote-signing"
	delegateVending = "vended-credentials"
)

// delegation is the access delegation a table answer gets: the first
// mode the client lists that the catalog offers (vended credentials only
// when vend, so a client listing both falls back to remote signing), or
// "" for none.
func delegation(r *http.Request, cat *catalogState, op string, vend bool) string {
	// Most catalogs delegate nothing: decided before the header is read.
	if (cat.signing == nil && cat.vending == nil) || (op != icerest.OpLoadTable && op != icerest.OpCreateTable) {
		return ""
	}
	h := r.Header.Get("X-Iceberg-Access-Delegation")
	if h == "" {
		return ""
	}
	for _, d := range strings.Split(h, ",") {
		switch strings.TrimSpace(d) {
		case delegateSigning:
			if cat.signing != nil {
				return delegateSigning
			}
		case delegateVending:
			if cat.vending != nil && vend {
				return delegateVending
			}
		}
	}
	return ""
}

// vendAccess is the access p gets to the table's files: write when the
// policy lets p write them (signRequest with storage_access "write", as
// remote signing asks), else read when it lets p read them; otherwise
// the denial. Asking for write is no refusal of the request: a reader is
// vended read-only keys.
func (h *IcebergHandler) vendAccess(r *http.Request, p *identity.Principal, cat *catalogState, res policies.Resource) (storage.Access, *policies.Decision) {
	ask := func(a storage.Access) policyRequest {
		return policyRequest{op: icerest.OpSignRequest, principal: p, catalog: cat, resource: res, storageAccess: string(a)}
	}
	if h.app.guard.authorize(r.Context(), ask(storage.Write).input(r)).Allow {
		return storage.Write, nil
	}
	if d := h.app.guard.decide(r, ask(storage.Read)); !d.Allow {
		return "", &d
	}
	return storage.Read, nil
}

// vend returns credentials for p on places with access, reused or from
// STS.
func (cat *catalogState) vend(r *http.Request, p *identity.Principal, table string, places []storage.Place, access storage.Access) (storage.Credentials, error) {
	key := cacheKeyOf(p, table, access, places)
	if c, ok := cat.vending.cache.Get(key); ok && time.Until(c.Expires) > vendMargin {
		telemetry.CountVend(cat.cfg.Name, string(access), "reused")
		return c, nil
	}
	// Locations no session policy can scope (a bucket's root, an IAM
	// wildcard) are refused before STS is asked.
	if _, err := storage.SessionPolicy(places, access); err != nil {
		telemetry.CountVend(cat.cfg.Name, string(access), "refused")
		return storage.Credentials{}, icerest.Errorf(http.StatusForbidden, icerest.Forbidden,
			"no credentials can be scoped to %s: %v", table, err)
	}
	c, err := cat.vending.vendor.Vend(r.Context(), p.ID, places, access)
	if err != nil {
		telemetry.CountVend(cat.cfg.Name, string(access), "failed")
		return storage.Credentials{}, icerest.Errorf(http.StatusServiceUnavailable, icerest.ServiceUnavailable,
			"vending storage credentials for %s: %v", table, err)
	}
	cat.vending.cache.Add(key, c)
	telemetry.CountVend(cat.cfg.Name, string(access), "vended")
	return c, nil
}

// cacheKeyOf joins who, what and where with 0x00 and 0x1F, which no
// principal id, checked name or location holds.
func cacheKeyOf(p *identity.Principal, table string, access storage.Access, places []storage.Place) string {
	var b strings.Builder
	b.WriteString(p.ID)
	for _, g := range p.Groups {
		b.WriteString("\x00" + g)
	}
	b.WriteString("\x1F" + table + "\x1F" + string(access))
	for _, pl := range places {
		b.WriteString("\x1F" + pl.Bucket + "/" + pl.Prefix)
	}
	return b.String()
}

// storageCredential is the spec's StorageCredential (the translators'
// type, so the Delta API answers what the Iceberg door vends in its own
// model).
type storageCredential = translate.StorageCredential

// credentialConfig is the FileIO config of c: the keys, their expiry,
// where the store is.
func (v *vending) credentialConfig(c storage.Credentials) map[string]string {
	cfg := map[string]string{
		"s3.access-key-id":               c.AccessKeyID,
		"s3.secret-access-key":           c.SecretAccessKey,
		"s3.session-token":               c.SessionToken,
		"s3.session-token-expires-at-ms": strconv.FormatInt(c.Expires.UnixMilli(), 10),
		"client.region":                  v.s3.Region,
		"s3.region":                      v.s3.Region,
	}
	if v.s3.Endpoint != "" {
		cfg["s3.endpoint"] = v.s3.Endpoint
	}
	if v.s3.PathStyle {
		cfg["s3.path-style-access"] = "true"
	}
	return cfg
}

// storageCredentials are c as the spec's list: one entry per place it
// is scoped to, each with the same keys.
func (v *vending) storageCredentials(c storage.Credentials) []storageCredential {
	cfg := v.credentialConfig(c)
	out := make([]storageCredential, 0, len(c.Places))
	for _, p := range c.Places {
		out = append(out, storageCredential{Prefix: "s3://" + p.Bucket + "/" + p.Prefix, Config: cfg})
	}
	return out
}

// tableName is the access log's and the cache's name of a table.
func tableName(ns []string, table string) string {
	return strings.Join(append(append([]string{}, ns...), table), ".")
}

// serveVendedTable runs next (its answer already stripped of any keys)
// and adds to a table answer credentials for p scoped to the table's
// locations, read-write or read-only as the policy says. Credentials that
// cannot be vended make the answer an error: a table answer without them
// would fail later, further from the cause.
func (h *IcebergHandler) serveVendedTable(w http.ResponseWriter, r *http.Request, q icerest.Request, p *identity.Principal,
	cat *catalogState, next upstream.Handler) {
	rt := q.Route
	if rt.Operation == icerest.OpCreateTable {
		rt.Table = q.Touched.Name
	}
	rec := upstream.Capture(next, r, q)
	if rec.Status != http.StatusOK {
		rec.WriteTo(w)
		return
	}
	places, err := placesOf(rec.Bytes(), cat.locations)
	if err == nil {
		var out []byte
		if out, err = h.vendInto(r, p, cat, rt, places, rec.Bytes()); err == nil {
			rec.SetBytes(out)
			rec.WriteTo(w)
			return
		}
	}
	telemetry.From(r.Context()).Refused()
	icerest.WriteError(w, r, err)
}

// vendInto vends credentials for the table rt and sets them in a table
// answer: storage-credentials, and the same keys in config for clients
// that read only that.
func (h *IcebergHandler) vendInto(r *http.Request, p *identity.Principal, cat *catalogState, rt icerest.Route,
	places []storage.Place, body []byte) ([]byte, error) {
	c, err := h.vendFor(r, p, cat, rt, places)
	if err != nil {
		return nil, err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, icerest.Errorf(http.StatusBadGateway, icerest.InternalServerError, "the catalog's table answer is unreadable: %v", err)
	}
	cfg := map[string]string{}
	if raw, ok := doc["config"]; ok {
		// Stripped already, the backend's signer settings too: a
		// malformed config is replaced.
		_ = json.Unmarshal(raw, &cfg)
	}
	for k, v := range cat.vending.credentialConfig(c) {
		cfg[k] = v
	}
	if doc["config"], err = json.Marshal(cfg); err != nil {
		return nil, err
	}
	if doc["storage-credentials"], err = json.Marshal(cat.vending.storageCredentials(c)); err != nil {
		return nil, err
	}
	return json.Marshal(doc)
}

// vendFor decides p's access to the table's files and vends credentials
// for it, naming the table and the access in the access log.
func (h *IcebergHandler) vendFor(r *http.Request, p *identity.Principal, cat *catalogState, rt icerest.Route,
	places []storage.Place) (storage.Credentials, error) {
	rec := telemetry.From(r.Context())
	table := tableName(rt.Namespace, rt.Table)
	rec.Table = table
	access, denied := h.vendAccess(r, p, cat, policies.Resource{Namespace: rt.Namespace, Table: rt.Table})
	if denied != nil {
		telemetry.CountVend(cat.cfg.Name, "none", "denied")
		return storage.Credentials{}, forbidden(rt.Operation, *denied)
	}
	rec.StorageAccess = string(access)
	return cat.vend(r, p, table, places, access)
}

// vendTableKeys vends p keys for one table of a catalog that vends,
// for the Delta doors (UC's temporary table credentials, the Delta API's
// getTableCredentials): the Iceberg door's vending (catalogState.vend:
// STS keys under a session policy confined to the table's locations,
// reused per principal, table and access, counted and audited alike).
// The access is the one asked, read-write when write, else read-only,
// decided as the Iceberg door decides it (signRequest with that
// storage_access, as api and apiOp); a principal who may not write the
// table's files is refused write rather than handed read-only keys,
// since neither Delta answer names an access. Errors are in the
// Iceberg model, for the caller to answer in its own.
func (a *App) vendTableKeys(r *http.Request, p *identity.Principal, cat *catalogState, api, apiOp string,
	ns []string, name string, write bool) (storage.Credentials, error) {
	access := accessOf(write)
	if err := a.decideVend(r, p, cat, policyRequest{api: api, apiOp: apiOp, op: icerest.OpSignRequest,
		resource: policies.Resource{Namespace: ns, Table: name}}, tableName(ns, name), access); err != nil {
		return storage.Credentials{}, err
	}
	places, err := a.tablePlaces(r, p, cat, icerest.Route{Operation: icerest.OpLoadTable, Namespace: ns, Table: name})
	if err == nil {
		err = requirePlaces(places)
	}
	if err != nil {
		return storage.Credentials{}, err
	}
	return cat.vend(r, p, tableName(ns, name), places, access)
}

// accessOf is read-write access when write, else read-only.
func accessOf(write bool) storage.Access {
	if write {
		return storage.Write
	}
	return storage.Read
}

// decideVend has the policy decide q (its api, operation and resource;
// p, cat and access filled in here) before keys named what are vended
// with access, noting both in the access log; a denial is counted and
// answered in the Iceberg model.
func (a *App) decideVend(r *http.Request, p *identity.Principal, cat *catalogState, q policyRequest, what string, access storage.Access) error {
	rec := telemetry.From(r.Context())
	rec.Table, rec.StorageAccess = what, string(access)
	q.principal, q.catalog = p, cat
	if q.op == icerest.OpSignRequest {
		q.storageAccess = string(access)
	}
	if d := a.guard.decide(r, q); !d.Allow {
		telemetry.CountVend(cat.cfg.Name, string(access), "denied")
		return icerest.Errorf(http.StatusForbidden, icerest.Forbidden, "%s", denial(q.apiOp, d))
	}
	return nil
}

// serveLoadCredentials answers loadCredentials for a catalog that vends:
// the table loaded as p (so it exists and p's backend lets p load it),
// then credentials vended as for a table answer. The backend is not
// asked for credentials: its would be the warehouse's.
func (h *IcebergHandler) serveLoadCredentials(w http.ResponseWriter, r *http.Request, q icerest.Request, p *identity.Principal, cat *catalogState) {
	rt := q.Route
	telemetry.From(r.Context()).Table = tableName(rt.Namespace, rt.Table)
	places, err := h.app.tablePlaces(r, p, cat, rt)
	if err == nil {
		err = requirePlaces(places)
	}
	if err != nil {
		upstream.WriteError(w, r, err, icerest.OpLoadCredentials)
		return
	}
	c, err := h.vendFor(r, p, cat, rt, places)
	if err != nil {
		telemetry.From(r.Context()).Refused()
		icerest.WriteError(w, r, err)
		return
	}
	// Keys for one principal: not for shared caches.
	w.Header().Set("Cache-Control", "no-store")
	icerest.WriteJSON(w, http.StatusOK, map[string]any{"storage-credentials": cat.vending.storageCredentials(c)})
}

// placesOf reads a LoadTableResult's S3 locations: the table's location,
// write.data.path and write.metadata.path, confined to rule.
func placesOf(body []byte, rule *locations.Rule) ([]storage.Place, error) {
	places, err := tableLocations(body, rule)
	if err != nil {
		return nil, err
	}
	return places, requirePlaces(places)
}

// requirePlaces refuses a table with no S3 location to scope keys to.
func requirePlaces(places []storage.Place) error {
	if len(places) == 0 {
		return icerest.Errorf(http.StatusForbidden, icerest.Forbidden,
			"the table has no location on S3 below a bucket's root to scope credentials to")
	}
	return nil
}
