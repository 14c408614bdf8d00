package gateway

import (
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/lakegate/lakegate/identity"
	"github.com/lakegate/lakegate/policies"
	"github.com/lakegate/lakegate/translate"
	"github.com/lakegate/lakegate/translate/sharing"
	"github.com/lakegate/lakegate/upstream"
	"github.com/lakegate/lakegate/upstream/icerest"
)

func init() {
	caddy.RegisterModule(IcebergHandler{})
}

// IcebergHandler is the Iceberg REST front door (/v1/...): it picks the
// catalog a request is for, answers /v1/config itself, and hands every
// other operation to that catalog's backend.
type IcebergHandler struct {
	app *App
	// reader opens tables to read their rows (/lakegate/preview) as the
	// Delta Sharing door reads shared tables.
	reader *sharing.Server
}

// icebergDoor answers in the Iceberg REST error model.
var icebergDoor = door{
	unauthorized: func(why error) error {
		return icerest.Errorf(http.StatusUnauthorized, icerest.NotAuthorized, "%v", why)
	},
	write: icerest.WriteError,
}

// CaddyModule returns the Caddy module information.
func (IcebergHandler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.lakegate_iceberg",
		New: func() caddy.Module { return new(IcebergHandler) },
	}
}

// Provision binds the handler to the lakegate app.
func (h *IcebergHandler) Provision(ctx caddy.Context) error {
	app, err := configuredApp(ctx, "lakegate_iceberg")
	if err != nil {
		return err
	}
	h.app = app
	h.reader = &sharing.Server{Catalogs: translate.NewCatalogs(app), Log: ctx.Logger()}
	return nil
}

// ServeHTTP serves /v1/..., /lakegate/catalogs (discovery.go),
// /lakegate/explain (explain.go), /lakegate/preview (preview.go) and
// /lakegate/commits (commits.go), and passes anything else to next.
func (h *IcebergHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	path := r.URL.EscapedPath()
	if path == catalogsPath {
		h.serveCatalogs(w, r)
		return nil
	}
	if path == explainPath {
		h.serveExplain(w, r)
		return nil
	}
	if path == previewPath {
		h.servePreview(w, r)
		return nil
	}
	if path == commitsPath {
		h.serveCommits(w, r)
		return nil
	}
	if !strings.HasPrefix(path, "/v1/") {
		return serveOrNotFound(w, r, next)
	}
	x, r := begin(h.app, w, r, "iceberg")
	defer x.end()
	h.serveAPI(x, r, path)
	return nil
}

// serveAPI serves one Iceberg REST request; x notes what it did.
func (h *IcebergHandler) serveAPI(x *exchange, r *http.Request, path string) {
	if path == "/v1/oauth/tokens" {
		x.rec.SetOperation(icerest.OpGetToken)
		h.serveToken(x, r)
		return
	}
	principal, r, ok := icebergDoor.admit(h.app.guard, x, r)
	if !ok {
		x.rec.SetOperation(operationOf(r.Method, path))
		return
	}
	cat, rerr := h.catalogFor(r, path)
	noteCatalog(r, cat)
	if rerr != nil {
		x.rec.SetOperation(operationOf(r.Method, path))
		icerest.WriteError(x, r, rerr)
		return
	}
	// /v1/config is parsed like every route, so a method other than GET
	// gets the same 405 (Allow, Iceberg error) as anywhere else.
	rt, rerr := icerest.ParseRoute(r.Method, path, cat.separator)
	x.rec.SetOperation(rt.Operation)
	if rerr == nil && rt.Operation == icerest.OpGetConfig {
		h.serveConfig(x, r, principal, cat)
		return
	}
	if rerr == nil {
		rerr = limitBody(x, r, cat.cfg.MaxRequestBody)
	}
	if rerr != nil {
		icerest.WriteError(x, r, rerr)
		return
	}
	h.serve(x, r, rt, principal, cat)
}

// operationOf names the operation of a request refused before its
// catalog's route is parsed (401, unknown warehouse), for metrics and the
// access log: the operation does not depend on the namespace separator.
func operationOf(method, path string) string {
	rt, _ := icerest.ParseRoute(method, path, icerest.UnitSeparator)
	return rt.Operation
}

// serveOrNotFound hands a request that is not the Iceberg API's to the
// rest of the route, and answers 404 in the Iceberg error model when
// nothing there answers it: Caddy's own answer would be an empty 200,
// which clients read as success (iceberg-go fails with EOF, iceberg-js
// reports namespaces created that were not).
func serveOrNotFound(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	ww := &writeWatcher{ResponseWriterWrapper: &caddyhttp.ResponseWriterWrapper{ResponseWriter: w}}
	if err := next.ServeHTTP(ww, r); err != nil || ww.wrote {
		return err
	}
	icerest.WriteError(w, r, icerest.Errorf(http.StatusNotFound, icerest.NotFound,
		"no such endpoint: %s %s", r.Method, r.URL.EscapedPath()))
	return nil
}

// writeWatcher notes whether a handler answered at all.
type writeWatcher struct {
	*caddyhttp.ResponseWriterWrapper
	wrote bool
}

func (w *writeWatcher) WriteHeader(code int) {
	w.wrote = true
	w.ResponseWriterWrapper.WriteHeader(code)
}

func (w *writeWatcher) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriterWrapper.Write(b)
}

func (w *writeWatcher) ReadFrom(r io.Reader) (int64, error) {
	w.wrote = true
	return w.ResponseWriterWrapper.ReadFrom(r)
}

func (w *writeWatcher) Flush() {
	w.wrote = true
	_ = http.NewResponseController(w.ResponseWriterWrapper).Flush()
}

// serve reads the request once (icerest.ParseRequest: the query checked,
// the body held and validated, so a malformed one never reaches a
// backend; it is small, limitBody capped it), authorizes the operation on
// every resource it touches, then runs that one reading through the
// catalog's pipeline, enforcing the policy's obligations.
func (h *IcebergHandler) serve(w http.ResponseWriter, r *http.Request, rt icerest.Route, p *identity.Principal, cat *catalogState) {
	q, rerr := icerest.ParseRequest(r, rt)
	if rerr == nil && rt.Operation == icerest.OpSignRequest {
		// Decided per access (read or write) once the request is read.
		if rerr = checkNames(rt); rerr == nil {
			h.serveSign(w, r, q, p, cat)
			return
		}
	}
	var res []policies.Resource
	if rerr == nil {
		res, rerr = appendResources(make([]policies.Resource, 0, 1), rt, q.Touched)
	}
	if rerr != nil {
		icerest.WriteError(w, r, rerr)
		return
	}
	var strip bool
	for _, one := range res {
		d := h.app.guard.decide(r, policyRequest{op: rt.Operation, principal: p, catalog: cat, resource: one})
		if !d.Allow {
			icerest.WriteError(w, r, forbidden(rt.Operation, d))
			return
		}
		strip = strip || d.Obligations.StripCredentials
	}
	if strip && rt.Operation == icerest.OpLoadCredentials {
		icerest.WriteError(w, r, icerest.Errorf(http.StatusForbidden, icerest.Forbidden,
			"the policy withholds storage credentials from this principal"))
		return
	}
	// A catalog with storage keys of the gateway's hands out none of the
	// backend's nor its own: only keys vended for the table, when it vends.
	if cat.cfg.Storage != nil && rt.Operation == icerest.OpLoadCredentials {
		if cat.vending != nil {
			h.serveLoadCredentials(w, r, q, p, cat)
			return
		}
		icerest.WriteError(w, r, icerest.Errorf(http.StatusForbidden, icerest.Forbidden,
			"catalog %q vends no storage credentials: its storage keys are the gateway's; use remote signing", cat.cfg.Name))
		return
	}
	// The policy's strip_credentials obligation withholds vended keys too
	// (remote signing, which hands out none, stays).
	mode := delegation(r, cat, rt.Operation, !strip)
	strip = strip || cat.cfg.Storage != nil
	filtered := h.app.guard.policy != nil && listings[rt.Operation]
	if !strip && !filtered {
		cat.pipeline.ServeRequest(w, r, q, p.ID) // the common case: no obligation, no closure
		return
	}
	run := func(w http.ResponseWriter, r *http.Request, q icerest.Request) {
		cat.pipeline.ServeRequest(w, r, q, p.ID)
	}
	if strip {
		inner := run
		dropSigner := cat.cfg.Storage != nil // the gateway's signer or keys, never the backend's
		run = func(w http.ResponseWriter, r *http.Request, q icerest.Request) {
			serveStripped(w, r, q, inner, dropSigner)
		}
	}
	switch mode {
	case delegateSigning:
		inner := run
		run = func(w http.ResponseWriter, r *http.Request, q icerest.Request) {
			serveRemoteSigning(w, r, q, cat, inner)
		}
	case delegateVending:
		inner := run
		run = func(w http.ResponseWriter, r *http.Request, q icerest.Request) {
			h.serveVendedTable(w, r, q, p, cat, inner)
		}
	}
	if filtered {
		rec := upstream.Capture(run, r, q)
		filterPage(r.Context(), h.app.guard.policy, policyRequest{op: rt.Operation, principal: p, catalog: cat, resource: res[0]}.input(r), rec)
		rec.WriteTo(w)
		return
	}
	run(w, r, q)
}

// serveConfig answers GET /v1/config: authorized first, then from the
// backend's own config (cached by the backend for its config TTL).
func (h *IcebergHandler) serveConfig(w http.ResponseWriter, r *http.Request, p *identity.Principal, cat *catalogState) {
	if d := h.app.guard.decide(r, policyRequest{op: icerest.OpGetConfig, principal: p, catalog: cat}); !d.Allow {
		icerest.WriteError(w, r, forbidden(icerest.OpGetConfig, d))
		return
	}
	cc, err := cat.pipeline.Config(r.Context())
	if err != nil {
		upstream.WriteError(w, r, err, icerest.OpGetConfig)
		return
	}
	icerest.WriteJSON(w, http.StatusOK, gatewayConfig(cat, cc, r))
}

func forbidden(op string, d policies.Decision) error {
	return icerest.Errorf(http.StatusForbidden, icerest.Forbidden, "%s", denial(op, d))
}

// catalogFor tells which catalog a request addresses: `warehouse` for
// /v1/config, the {prefix} for prefixed paths, else the default catalog.
func (h *IcebergHandler) catalogFor(r *http.Request, path string) (*catalogState, error) {
	name, err := h.catalogName(r, path)
	if err != nil {
		return nil, err
	}
	cat, ok := h.app.catalog(name)
	if !ok {
		return nil, icerest.Errorf(http.StatusNotFound, icerest.NoSuchWarehouse, "no catalog named %q", name)
	}
	return cat, nil
}

func (h *IcebergHandler) catalogName(r *http.Request, path string) (string, error) {
	if path == "/v1/config" {
		if wh := r.URL.Query().Get("warehouse"); wh != "" {
			return wh, nil
		}
		return h.defaultCatalog("GET /v1/config needs ?warehouse=<catalog>")
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(path, "/v1/"), "/")
	if icerest.IsReservedPrefix(first) {
		return h.prefixlessCatalog()
	}
	name, err := url.PathUnescape(first)
	if err != nil {
		return "", icerest.Errorf(http.StatusBadRequest, icerest.BadRequest, "malformed prefix %q", first)
	}
	return name, nil
}

// prefixlessOff is prefixless_paths' value that refuses the form.
const prefixlessOff = "off"

// prefixlessCatalog is the catalog the prefix-less path form reaches:
// prefixless_paths, else the default catalog.
func (h *IcebergHandler) prefixlessCatalog() (string, error) {
	switch p := h.app.PrefixlessPaths; p {
	case "":
		return h.defaultCatalog("prefix-less paths need a default catalog; use /v1/{prefix}/...")
	case prefixlessOff:
		return "", icerest.Errorf(http.StatusBadRequest, icerest.BadRequest,
			"this gateway serves several catalogs and refuses paths without a prefix (prefixless_paths off): "+
				"use /v1/{prefix}/..., with the prefix /v1/config gave")
	default:
		return p, nil
	}
}

func (h *IcebergHandler) defaultCatalog(why string) (string, error) {
	if h.app.DefaultCatalog == "" {
		return "", icerest.Errorf(http.StatusBadRequest, icerest.BadRequest, "%s", why)
	}
	return h.app.DefaultCatalog, nil
}

// checkNames checks the names a request path addresses: see
// checkIdentifier.
func checkNames(rt icerest.Route) error {
	if err := checkIdentifier(rt.Namespace...); err != nil {
		return err
	}
	for _, n := range [...]string{rt.Table, rt.View, rt.Function, rt.PlanID} {
		if n == "" {
			continue
		}
		if err := checkIdentifier(n); err != nil {
			return err
		}
	}
	return nil
}

// checkIdentifier refuses, before any backend sees them, names no catalog
// can hold faithfully (icerest.NameProblem). The rule is the same for
// every backend.
func checkIdentifier(names ...string) error {
	for _, n := range names {
		if problem := icerest.NameProblem(n); problem != "" {
			return icerest.Errorf(http.StatusBadRequest, icerest.BadRequest, "name %q %s", n, problem)
		}
	}
	return nil
}

// limitBody answers 413 for a declared oversized body and caps the rest.
// A body declared empty (a GET's) needs no cap: net/http (HTTP/1) and
// x/net/http2 both end it at the declared length.
func limitBody(w http.ResponseWriter, r *http.Request, limit int64) error {
	if r.ContentLength > limit {
		return icerest.Errorf(http.StatusRequestEntityTooLarge, icerest.RequestEntityTooLarge,
			"request body of %d bytes exceeds the limit of %d", r.ContentLength, limit)
	}
	if r.ContentLength != 0 {
		r.Body = http.MaxBytesReader(w, r.Body, limit)
	}
	return nil
}

// serveToken answers POST /v1/oauth/tokens: lakegate's own issuer when
// configured; else, when the default catalog passes client credentials
// through, its backend's token endpoint; else the client learns that no
// token is issued here.
func (h *IcebergHandler) serveToken(w http.ResponseWriter, r *http.Request) {
	if iss := h.app.guard.issuer; iss != nil {
		iss.ServeToken(w, r)
		return
	}
	if cat, ok := h.app.catalog(h.app.DefaultCatalog); ok &&
		cat.cfg.Remote != nil && cat.cfg.Remote.Auth.Mode == upstream.AuthPassthrough {
		// The token request's form is the backend's to read: it is held
		// and passed on as it is.
		q, err := icerest.ParseRequest(r, icerest.Route{Operation: icerest.OpGetToken})
		if err != nil {
			icerest.WriteError(w, r, err)
			return
		}
		cat.pipeline.Backend.Serve(w, r, q)
		return
	}
	icerest.WriteJSON(w, http.StatusBadRequest, map[string]string{
		"error":             "unsupported_grant_type",
		"error_description": "this lakegate does not issue tokens; connect without credentials",
	})
}

// configResponse is the spec's CatalogConfig.
type configResponse struct {
	Defaults               map[string]string `json:"defaults"`
	Overrides              map[string]string `json:"overrides"`
	Endpoints              []string          `json:"endpoints,omitempty"`
	IdempotencyKeyLifetime string            `json:"idempotency-key-lifetime,omitempty"`
}

// gatewayConfig turns a backend's /v1/config into the gateway's: the
// gateway's catalog name as prefix, the gateway's own URL wherever the
// backend named its own, only endpoints both sides serve (none listed when
// the backend lists none), and the
// idempotency-key lifetime when lakegate replays keyed writes itself.
func gatewayConfig(cat *catalogState, cc *upstream.CatalogConfig, r *http.Request) configResponse {
	name := cat.cfg.Name
	out := configResponse{Defaults: map[string]string{}, Overrides: map[string]string{}}
	if rp := cat.pipeline.Replayer; rp != nil {
		out.IdempotencyKeyLifetime = isoDuration(rp.Lifetime())
	} else if cat.keyLifetime > 0 {
		out.IdempotencyKeyLifetime = isoDuration(cat.keyLifetime)
	}
	for k, v := range cc.Defaults {
		if k != "uri" && k != "prefix" {
			out.Defaults[k] = v
		}
	}
	for k, v := range cc.Overrides {
		out.Overrides[k] = v
	}
	out.Overrides["prefix"] = name
	out.Overrides["namespace-separator"] = url.PathEscape(cat.separator)
	if _, ok := cc.Overrides["uri"]; ok {
		out.Overrides["uri"] = gatewayURL(r)
	}
	// A backend that lists no endpoints (Nessie) leaves the list out too, so
	// clients apply their own defaults, as they would talking to it
	// directly: a list of the spec's defaults would shut out Java's
	// view-endpoints-supported, which only applies to an absent list.
	served := map[string]bool{}
	for _, ep := range icerest.Endpoints {
		served[ep] = true
	}
	for _, ep := range cc.Endpoints {
		if served[ep] {
			out.Endpoints = append(out.Endpoints, ep)
		}
	}
	sort.Strings(out.Endpoints)
	return out
}

// isoDuration writes d as an ISO-8601 duration (PT30M, PT1H30M, PT45S).
func isoDuration(d time.Duration) string {
	s := "PT"
	if h := int(d.Hours()); h > 0 {
		s += strconv.Itoa(h) + "H"
	}
	if m := int(d.Minutes()) % 60; m > 0 {
		s += strconv.Itoa(m) + "M"
	}
	if sec := int(d.Seconds()) % 60; sec > 0 || s == "PT" {
		s += strconv.Itoa(sec) + "S"
	}
	return s
}

// gatewayURL is the base URL the client reached the gateway at.
func gatewayURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// Interface guards
var (
	_ caddy.Provisioner           = (*IcebergHandler)(nil)
	_ caddyhttp.MiddlewareHandler = (*IcebergHandler)(nil)
)
