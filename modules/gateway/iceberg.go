package gateway

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/lakegate/lakegate/upstream/icerest"
)

func init() {
	caddy.RegisterModule(IcebergHandler{})
}

// IcebergHandler is the Iceberg REST front door (/v1/...): it picks the
// catalog a request is for and hands it to that catalog's backend.
type IcebergHandler struct {
	app *App
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
	app, err := ctx.App("lakegate")
	if err != nil {
		return err
	}
	h.app = app.(*App)
	return nil
}

// ServeHTTP serves /v1/... and passes anything else to next.
func (h *IcebergHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	path := r.URL.EscapedPath()
	if !strings.HasPrefix(path, "/v1/") {
		return next.ServeHTTP(w, r)
	}
	name, rerr := h.catalogName(r, path)
	if rerr != nil {
		icerest.WriteError(w, r, rerr)
		return nil
	}
	backend, ok := h.app.backend(name)
	if !ok {
		icerest.WriteError(w, r, icerest.Errorf(http.StatusNotFound, icerest.NoSuchWarehouse,
			"no catalog named %q", name))
		return nil
	}
	backend.ServeHTTP(w, r)
	return nil
}

// catalogName tells which catalog a request addresses: `warehouse` for
// /v1/config, the {prefix} for prefixed paths, else the default catalog.
func (h *IcebergHandler) catalogName(r *http.Request, path string) (string, *icerest.Error) {
	if path == "/v1/config" {
		if wh := r.URL.Query().Get("warehouse"); wh != "" {
			return wh, nil
		}
		return h.defaultCatalog("GET /v1/config needs ?warehouse=<catalog>")
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(path, "/v1/"), "/")
	if icerest.IsReservedPrefix(first) {
		return h.defaultCatalog("prefix-less paths need a default catalog; use /v1/{prefix}/...")
	}
	name, err := url.PathUnescape(first)
	if err != nil {
		return "", icerest.Errorf(http.StatusBadRequest, icerest.BadRequest, "malformed prefix %q", first)
	}
	return name, nil
}

func (h *IcebergHandler) defaultCatalog(why string) (string, *icerest.Error) {
	if h.app.DefaultCatalog == "" {
		return "", icerest.Errorf(http.StatusBadRequest, icerest.BadRequest, "%s", why)
	}
	return h.app.DefaultCatalog, nil
}

// Interface guards
var (
	_ caddy.Provisioner           = (*IcebergHandler)(nil)
	_ caddyhttp.MiddlewareHandler = (*IcebergHandler)(nil)
)
