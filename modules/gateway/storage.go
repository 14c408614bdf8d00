package gateway

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/lakegate/lakegate/caller"
	"github.com/lakegate/lakegate/identity"
	"github.com/lakegate/lakegate/internal/strictjson"
	"github.com/lakegate/lakegate/policies"
	"github.com/lakegate/lakegate/storage"
	"github.com/lakegate/lakegate/telemetry"
	"github.com/lakegate/lakegate/translate"
	"github.com/lakegate/lakegate/upstream"
	"github.com/lakegate/lakegate/upstream/icerest"
	"github.com/lakegate/lakegate/upstream/locations"
)

// signing is a catalog's remote signer: the storage keys (in the
// signer), and the decisions recently made, so that signing every file
// of a scan asks the policy and the catalog once per principal, table and
// access rather than once per file.
type signing struct {
	signer    *storage.Signer
	s3        storage.S3Config // endpoint, region, path style (its secrets unused here)
	decisions *expirable.LRU[signKey, signDecision]
}

// signKey is what a decision is made for: principal is the id and the
// groups; table joins the namespace levels and the name with 0x1F, which
// no checked name holds.
type signKey struct {
	principal, table string
	access           storage.Access
}

// signDecision is a policy's answer with, when it allows, the table's
// S3 locations as the catalog named them.
type signDecision struct {
	denied *policies.Decision
	places []storage.Place
}

// maxSignDecisions bounds the decision cache (an entry is a few hundred
// bytes).
const maxSignDecisions = 10_000

// checkStorage validates a catalog's storage block.
func checkStorage(cc CatalogConfig) error {
	if cc.Storage == nil {
		return nil
	}
	if cc.Unified != nil {
		return errors.New("a unified catalog takes no storage: its members' own apply")
	}
	if err := cc.Storage.Check(); err != nil {
		return err
	}
	// A remote backend's table locations are what the gateway signs and
	// vends under: without roots to confine them to, a backend that
	// answers another table's (or catalog's) location would get the
	// gateway's keys used there. Refused here rather than signing nothing
	// at run time, which would look like a working catalog.
	if cc.Remote != nil && len(cc.AllowedLocations) == 0 {
		return errors.New("storage on a remote catalog needs allowed_locations: the s3:// roots its tables lie under " +
			"(nothing is signed or vended outside them, whatever locations the backend answers)")
	}
	return nil
}

// newSigning builds cc's signer (its secrets resolved), or nil when it
// signs nothing.
func newSigning(cc CatalogConfig) (*signing, error) {
	if cc.Storage == nil || !cc.Storage.RemoteSigning {
		return nil, nil
	}
	if err := cc.Storage.Check(); err != nil {
		return nil, err
	}
	sg, err := storage.NewSigner(*cc.Storage.S3)
	if err != nil {
		return nil, err
	}
	s3 := *cc.Storage.S3
	s3.AccessKeyID, s3.SecretAccessKey, s3.SessionToken = "", "", ""
	return &signing{signer: sg, s3: s3,
		decisions: expirable.NewLRU[signKey, signDecision](maxSignDecisions, nil, cc.Storage.TTL())}, nil
}

// serveSign answers signRequest: the request read strictly, what it
// touches checked against the table's locations, the access decided by
// the policy, then signed. A denial or a request outside the table is a
// 403; nothing is signed for either.
func (h *IcebergHandler) serveSign(w http.ResponseWriter, r *http.Request, q icerest.Request, p *identity.Principal, cat *catalogState) {
	sg := cat.signing
	rec := telemetry.From(r.Context())
	rt := q.Route
	rec.Table = strings.Join(append(append([]string{}, rt.Namespace...), rt.Table), ".")
	if sg == nil {
		icerest.WriteError(w, r, icerest.Errorf(http.StatusBadRequest, icerest.BadRequest,
			"catalog %q signs no storage requests: it has no storage block with remote_signing", cat.cfg.Name))
		return
	}
	var req storage.SignRequest
	err := strictjson.Unmarshal(q.Body, &req)
	if err == nil {
		err = req.Check()
	}
	if err != nil {
		icerest.WriteError(w, r, icerest.Errorf(http.StatusBadRequest, icerest.BadRequest, "signRequest body: %v", err))
		return
	}
	t, err := sg.signer.Target(req)
	if err != nil {
		h.refuseSign(w, r, cat, "none", err)
		return
	}
	rec.StorageAccess = string(t.Access)
	d, err := h.signDecision(r, p, cat, rt, t.Access)
	if err != nil {
		if icerest.AsError(err).Code == http.StatusForbidden {
			// The table's locations outside the catalog's (or the
			// backend refusing p the table): nothing signed.
			telemetry.CountSign(cat.cfg.Name, string(t.Access), "refused")
			telemetry.From(r.Context()).Refused()
		}
		upstream.WriteError(w, r, err, icerest.OpSignRequest)
		return
	}
	if d.denied != nil {
		telemetry.CountSign(cat.cfg.Name, string(t.Access), "denied")
		icerest.WriteError(w, r, forbidden(icerest.OpSignRequest, *d.denied))
		return
	}
	if err := t.Inside(d.places); err != nil {
		h.refuseSign(w, r, cat, string(t.Access), err)
		return
	}
	res, err := sg.signer.Sign(r.Context(), t, req.Headers)
	if err != nil {
		h.refuseSign(w, r, cat, string(t.Access), err)
		return
	}
	telemetry.CountSign(cat.cfg.Name, string(t.Access), "signed")
	// A signature is for one request at one time: not to be reused.
	w.Header().Set("Cache-Control", "no-cache")
	icerest.WriteJSON(w, http.StatusOK, res)
}

func (h *IcebergHandler) refuseSign(w http.ResponseWriter, r *http.Request, cat *catalogState, access string, err error) {
	telemetry.CountSign(cat.cfg.Name, access, "refused")
	telemetry.From(r.Context()).Refused()
	icerest.WriteError(w, r, icerest.Errorf(http.StatusForbidden, icerest.Forbidden, "signRequest: %v", err))
}

// signDecision is the policy's decision on access to the table for p and,
// when it allows, the table's locations, from the cache or made now. Only
// decisions are cached: a failure to load the table is not.
func (h *IcebergHandler) signDecision(r *http.Request, p *identity.Principal, cat *catalogState, rt icerest.Route,
	access storage.Access) (signDecision, error) {
	cache := cat.signing.decisions
	// The groups are part of who asks: a token with other groups for the
	// same id is decided again.
	key := signKey{principal: p.ID + "\x00" + strings.Join(p.Groups, "\x00"), access: access,
		table: strings.Join(append(append([]string{}, rt.Namespace...), rt.Table), icerest.UnitSeparator)}
	if d, ok := cache.Get(key); ok {
		// The access log names the decision a request was signed (or
		// refused) on, made now or reused.
		telemetry.From(r.Context()).CountDecision(d.denied == nil)
		if d.denied != nil {
			telemetry.From(r.Context()).Refused()
		}
		return d, nil
	}
	pol := h.app.guard.decide(r, policyRequest{op: icerest.OpSignRequest, principal: p, catalog: cat,
		resource: policies.Resource{Namespace: rt.Namespace, Table: rt.Table}, storageAccess: string(access)})
	if !pol.Allow {
		d := signDecision{denied: &pol}
		cache.Add(key, d)
		return d, nil
	}
	places, err := h.app.tablePlaces(r, p, cat, rt)
	if err != nil {
		return signDecision{}, err
	}
	d := signDecision{places: places}
	cache.Add(key, d)
	return d, nil
}

// tablePlaces loads the table through the catalog's pipeline, as p (a
// passthrough backend checks p's own credentials), and reads its S3
// locations: the table's location, write.data.path and
// write.metadata.path.
func (a *App) tablePlaces(r *http.Request, p *identity.Principal, cat *catalogState, rt icerest.Route) ([]storage.Place, error) {
	ctx := caller.With(r.Context(), caller.Caller{Principal: p.ID, Authorization: r.Header.Get("Authorization")})
	res, err := a.Serve(ctx, cat.cfg.Name, translate.Call{
		Route: icerest.Route{Operation: icerest.OpLoadTable, Namespace: rt.Namespace, Table: rt.Table}})
	if err != nil {
		return nil, err
	}
	if res.Status != http.StatusOK {
		var e struct {
			Error struct {
				Message string `json:"message"`
				Type    string `json:"type"`
			} `json:"error"`
		}
		_ = json.Unmarshal(res.Body, &e)
		return nil, icerest.Errorf(res.Status, e.Error.Type, "loading the table: %s", e.Error.Message)
	}
	return tableLocations(res.Body, cat.locations)
}

// tableLocations reads a LoadTableResult's S3 locations: the table's
// location, write.data.path and write.metadata.path (storage.TableLocations
// leaves out what is not a place under a bucket). Each must lie inside
// the catalog's locations (rule: an embedded catalog's warehouse and
// allowed_locations, a remote's allowed_locations): the answer is the
// backend's word, and a backend that names another catalog's table, or a
// bucket it does not own, as this table's location must not get the
// gateway's keys used there. One location outside refuses the table: the
// answer cannot be trusted for the others either.
func tableLocations(body []byte, rule *locations.Rule) ([]storage.Place, error) {
	locs, err := confinedLocations(body, rule)
	if err != nil {
		return nil, err
	}
	return storage.TableLocations(locs...), nil
}

// confinedLocations reads a LoadTableResult's locations as written (the
// table's location, write.data.path, write.metadata.path; "" when not
// set), each inside rule, else the refusal tableLocations answers.
func confinedLocations(body []byte, rule *locations.Rule) ([]string, error) {
	var doc struct {
		Metadata struct {
			Location   string            `json:"location"`
			Properties map[string]string `json:"properties"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, icerest.Errorf(http.StatusBadGateway, icerest.InternalServerError, "the catalog's table is unreadable: %v", err)
	}
	m := doc.Metadata
	locs := []string{m.Location, m.Properties["write.data.path"], m.Properties["write.metadata.path"]}
	for _, loc := range locs {
		if loc != "" && !rule.Allows(loc) {
			return nil, icerest.Errorf(http.StatusForbidden, icerest.Forbidden,
				"the catalog answered the table's location %q, outside the catalog's warehouse and allowed_locations: "+
					"nothing is signed or vended for the table", loc)
		}
	}
	return locs, nil
}

// serveRemoteSigning runs next and adds to a table answer's config where
// the client signs its S3 requests: the gateway's signRequest for that
// table, the endpoint and region, and no keys (next strips them).
func serveRemoteSigning(w http.ResponseWriter, r *http.Request, q icerest.Request, cat *catalogState, next upstream.Handler) {
	rt := q.Route
	if rt.Operation == icerest.OpCreateTable {
		rt.Table = q.Touched.Name
	}
	rt.Operation = icerest.OpSignRequest
	base := gatewayURL(r)
	endpoint := strings.TrimPrefix(rt.Path(url.PathEscape(cat.cfg.Name), url.PathEscape(cat.separator)), "/")
	rec := upstream.Capture(next, r, q)
	if rec.Status == http.StatusOK {
		if out, err := withSignerConfig(rec.Bytes(), cat.signing.s3, base, endpoint); err == nil {
			rec.SetBytes(out)
		}
	}
	rec.WriteTo(w)
}

// withSignerConfig sets the remote signing keys of a LoadTableResult's
// config.
func withSignerConfig(body []byte, s3 storage.S3Config, base, endpoint string) ([]byte, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, err
	}
	cfg := map[string]string{}
	if raw, ok := doc["config"]; ok {
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return nil, err
		}
	}
	for k := range cfg {
		if icerest.IsSecretConfigKey(k) || strings.HasPrefix(k, "s3.access-key-id") {
			delete(cfg, k)
		}
	}
	cfg["s3.remote-signing-enabled"] = "true"
	// PyIceberg's FsspecFileIO signs through the signer this names;
	// Iceberg Java reads s3.remote-signing-enabled.
	cfg["s3.signer"] = "S3V4RestSigner"
	cfg["s3.signer.uri"] = base
	cfg["s3.signer.endpoint"] = endpoint
	// Iceberg Java 1.11 reads signer.uri and signer.endpoint first (the
	// s3.signer.* names are deprecated there): set both, so a backend's own
	// signer.* (its signer, not the gateway's) never wins.
	cfg["signer.uri"] = base
	cfg["signer.endpoint"] = endpoint
	cfg["s3.region"], cfg["client.region"] = s3.Region, s3.Region
	if s3.Endpoint != "" {
		cfg["s3.endpoint"] = s3.Endpoint
	}
	if s3.PathStyle {
		cfg["s3.path-style-access"] = "true"
	}
	var err error
	if doc["config"], err = json.Marshal(cfg); err != nil {
		return nil, err
	}
	return json.Marshal(doc)
}
