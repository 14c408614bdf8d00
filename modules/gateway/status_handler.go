package gateway

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func init() {
	caddy.RegisterModule(StatusHandler{})
	httpcaddyfile.RegisterHandlerDirective("lakegate_status", parseStatusHandler)
	httpcaddyfile.RegisterDirectiveOrder("lakegate_status", httpcaddyfile.Before, "reverse_proxy")
}

// StatusHandler serves the admin endpoint's health, status and page
// (/lakegate/health/live, /lakegate/health/ready, /lakegate/status,
// /lakegate/) on a site of its own, for browsers: Caddy's admin endpoint
// refuses a browser's navigation (it carries Sec-Fetch-Mode and no
// Origin). Like the admin endpoint, it answers only requests that name
// the gateway by a loopback name, so a web page that rebinds its own DNS
// name to 127.0.0.1 cannot read it; the health paths answer any name, as
// probes name the gateway by address (a kubelet sends Host: <pod IP>:port)
// and say no more than ready or not, per catalog.
type StatusHandler struct {
	// Hosts are the host names (without port) the handler answers for
	// (default: localhost, 127.0.0.1, ::1).
	Hosts []string `json:"hosts,omitempty"`
}

// CaddyModule returns the Caddy module information.
func (StatusHandler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "http.handlers.lakegate_status", New: func() caddy.Module { return new(StatusHandler) }}
}

var loopbackNames = []string{"localhost", "127.0.0.1", "::1"}

// ServeHTTP answers the status paths and passes anything else to next,
// the Iceberg door's paths under /lakegate/ too (catalogs, explain,
// preview), which the /lakegate/ subtree would otherwise shadow on a
// site that runs this handler first.
func (h *StatusHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	serve := statusRoute(r.URL.Path)
	if serve == nil || icebergLakegatePaths[r.URL.Path] {
		return next.ServeHTTP(w, r)
	}
	if !h.allowsHost(r.Host) && !strings.HasPrefix(r.URL.Path, "/lakegate/health/") {
		writeAPIError(w, caddy.APIError{HTTPStatus: http.StatusForbidden, Message: "host not allowed: " + r.Host})
		return nil
	}
	if err := serve.ServeHTTP(w, r); err != nil {
		writeAPIError(w, err)
	}
	return nil
}

// icebergLakegatePaths are the Iceberg door's paths under /lakegate/.
var icebergLakegatePaths = map[string]bool{catalogsPath: true, explainPath: true, previewPath: true}

// statusRoute is the handler of statusRoutes for path, or nil.
func statusRoute(path string) caddy.AdminHandler {
	for _, rt := range statusRoutes {
		if path == rt.Pattern || (strings.HasSuffix(rt.Pattern, "/") && strings.HasPrefix(path, rt.Pattern)) {
			return rt.Handler
		}
	}
	return nil
}

func (h *StatusHandler) allowsHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	host = strings.Trim(host, "[]")
	hosts := h.Hosts
	if len(hosts) == 0 {
		hosts = loopbackNames
	}
	return slices.ContainsFunc(hosts, func(h string) bool { return strings.EqualFold(h, host) })
}

// writeAPIError answers err as Caddy's admin endpoint would:
// {"error": message} with the error's status (500 when it has none).
func writeAPIError(w http.ResponseWriter, err error) {
	status, msg := http.StatusInternalServerError, err.Error()
	var api caddy.APIError
	if errors.As(err, &api) {
		if api.HTTPStatus != 0 {
			status = api.HTTPStatus
		}
		if api.Message != "" {
			msg = api.Message
		} else if api.Err != nil {
			msg = api.Err.Error()
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// parseStatusHandler parses `lakegate_status [<host>...]`.
func parseStatusHandler(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	handler := new(StatusHandler)
	return handler, handler.UnmarshalCaddyfile(h.Dispenser)
}

// UnmarshalCaddyfile reads `lakegate_status [<host>...]`: the host names
// it answers for, loopback ones by default.
func (h *StatusHandler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	h.Hosts = d.RemainingArgs()
	for d.NextBlock(0) {
		return d.Errf("lakegate_status takes no options, got %q", d.Val())
	}
	return nil
}

// Interface guards
var (
	_ caddyhttp.MiddlewareHandler = (*StatusHandler)(nil)
	_ caddyfile.Unmarshaler       = (*StatusHandler)(nil)
)
