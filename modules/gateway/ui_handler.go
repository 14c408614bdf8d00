package gateway

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func init() {
	caddy.RegisterModule(UIHandler{})
	httpcaddyfile.RegisterHandlerDirective("lakegate_ui", parseUIHandler)
	httpcaddyfile.RegisterDirectiveOrder("lakegate_ui", httpcaddyfile.Before, "reverse_proxy")
}

// uiPath is the catalog browser's subtree.
const uiPath = "/ui/"

//go:embed ui
var uiFiles embed.FS

// uiAsset is one embedded file of the browser, read once at start.
type uiAsset struct {
	body        []byte
	contentType string
	etag        string
}

// uiAssets are the browser's files by path under /ui/ ("" is the page).
var uiAssets = loadUIAssets()

func loadUIAssets() map[string]uiAsset {
	types := map[string]string{".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
		".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}
	out := map[string]uiAsset{}
	err := fs.WalkDir(uiFiles, "ui", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := uiFiles.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		name := strings.TrimPrefix(p, "ui/")
		if name == "index.html" {
			name = ""
		}
		out[name] = uiAsset{body: body, contentType: types[path.Ext(p)], etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil {
		panic("lakegate: embedded UI: " + err.Error()) // the files are compiled in: cannot happen
	}
	return out
}

// uiSecurityHeaders keep the page to its own origin: its scripts and
// styles are the embedded files (no inline code, nothing from a CDN), it
// talks only to the gateway that served it, no other site may frame it,
// and no Referer leaves it (its fragment may hold a token for a moment).
var uiSecurityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
		"connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
	"X-Content-Type-Options": "nosniff",
	"Referrer-Policy":        "no-referrer",
	"X-Frame-Options":        "DENY",
	"Cache-Control":          "no-cache",
}

// UIHandler serves the catalog browser at /ui/: a page, a script and a
// style sheet embedded in the binary. The page holds no data: its script
// asks the gateway's own APIs (GET /lakegate/catalogs, the Iceberg REST
// door) with the visitor's bearer token, so the policy decides what it
// shows exactly as it would for any client with that token. Everything
// else passes to the next handler.
type UIHandler struct {
	// Sharing is the prefix of the site's Delta Sharing door
	// (lakegate_sharing), whose shares the landing page lists as the door
	// answers the visitor's token (default: none, no shares shown).
	Sharing string `json:"sharing,omitempty"`

	config []byte // /ui/config.json: what the page needs to know of the site
}

// uiConfig is /ui/config.json.
type uiConfig struct {
	Sharing string `json:"sharing,omitempty"`
}

// Provision checks the options and renders the page's config.
func (h *UIHandler) Provision(caddy.Context) error {
	if h.Sharing != "" && (!strings.HasPrefix(h.Sharing, "/") || strings.ContainsAny(h.Sharing, "?#")) {
		return fmt.Errorf("lakegate_ui: sharing must be a path starting with /, got %q", h.Sharing)
	}
	var err error
	h.config, err = json.Marshal(uiConfig{Sharing: strings.TrimSuffix(h.Sharing, "/")})
	return err
}

// CaddyModule returns the Caddy module information.
func (UIHandler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "http.handlers.lakegate_ui", New: func() caddy.Module { return new(UIHandler) }}
}

// ServeHTTP serves /ui and /ui/... and passes anything else to next.
func (h *UIHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	p := r.URL.Path
	if p == strings.TrimSuffix(uiPath, "/") {
		http.Redirect(w, r, uiPath, http.StatusPermanentRedirect)
		return nil
	}
	name, ok := strings.CutPrefix(p, uiPath)
	if !ok {
		return next.ServeHTTP(w, r)
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeAPIError(w, caddy.APIError{HTTPStatus: http.StatusMethodNotAllowed,
			Message: "method " + r.Method + " not allowed on " + uiPath + " (allowed: GET, HEAD)"})
		return nil
	}
	asset, ok := uiAssets[name]
	if name == "config.json" {
		asset, ok = uiAsset{body: h.config, contentType: "application/json"}, true
	}
	if !ok {
		writeAPIError(w, caddy.APIError{HTTPStatus: http.StatusNotFound, Message: "no such page: " + p})
		return nil
	}
	for k, v := range uiSecurityHeaders {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", asset.contentType)
	if asset.etag != "" {
		w.Header().Set("ETag", asset.etag)
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(asset.body))
	return nil
}

// parseUIHandler parses `lakegate_ui`.
func parseUIHandler(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	handler := new(UIHandler)
	return handler, handler.UnmarshalCaddyfile(h.Dispenser)
}

// UnmarshalCaddyfile reads `lakegate_ui [{ sharing <prefix> }]`: the page
// reads what the site's other handlers serve.
func (h *UIHandler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if err := noMoreArgs(d); err != nil {
		return err
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "sharing":
			if !d.NextArg() {
				return d.ArgErr()
			}
			h.Sharing = d.Val()
			if err := noMoreArgs(d); err != nil {
				return err
			}
		default:
			return d.Errf("lakegate_ui: unknown option %q (known: sharing)", d.Val())
		}
	}
	return nil
}

// Interface guards
var (
	_ caddyhttp.MiddlewareHandler = (*UIHandler)(nil)
	_ caddy.Provisioner           = (*UIHandler)(nil)
	_ caddyfile.Unmarshaler       = (*UIHandler)(nil)
)
