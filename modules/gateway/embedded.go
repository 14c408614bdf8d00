package gateway

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/icerest"
	"github.com/lakegate/lakegate/upstream/locations"
)

// embeddedPool keeps embedded catalogs (open databases) alive across
// config reloads: a reload with the same catalog reuses it.
var embeddedPool = caddy.NewUsagePool()

type pooledCatalog struct{ *embedded.Catalog }

func (p pooledCatalog) Destruct() error { return p.Close() }

// lazyCatalog is an embedded catalog opened on first use: App.Start, or a
// request that comes before it (Caddy starts its apps in no set order).
// Provision only checks the configuration, because `lakegate validate`
// provisions apps and must not create a database or a warehouse.
type lazyCatalog struct {
	name string
	once sync.Once
	open func() (*embedded.Catalog, error)
	cat  *embedded.Catalog
	err  error
	log  *zap.Logger
}

func (l *lazyCatalog) get() (*embedded.Catalog, error) {
	l.once.Do(func() {
		if l.cat, l.err = l.open(); l.err != nil {
			// The error may name the DSN, which may hold a password: it is
			// the operator's (Start fails with it), never a client's.
			l.err = fmt.Errorf("catalog %q: %w", l.name, l.err)
		}
	})
	return l.cat, l.err
}

// ServeHTTP serves the catalog's Iceberg REST API once it is open.
func (l *lazyCatalog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cat, err := l.get()
	if err != nil {
		l.log.Error("the embedded catalog did not open", zap.String("catalog", l.name))
		icerest.WriteError(w, r, icerest.Errorf(http.StatusServiceUnavailable, icerest.ServiceUnavailable,
			"the embedded catalog %q did not open (see the gateway's log)", l.name))
		return
	}
	cat.ServeHTTP(w, r)
}

// embeddedCatalog checks an embedded catalog's configuration and returns
// it unopened, with the rule its files are confined to.
func (a *App) embeddedCatalog(cc CatalogConfig) (*lazyCatalog, *locations.Rule, error) {
	cfg := *cc.Embedded
	if cfg.Name == "" {
		cfg.Name = cc.Name
	}
	cfg.AllowedLocations = cc.AllowedLocations
	rule, err := embedded.Check(cfg)
	if err != nil {
		return nil, nil, err
	}
	lazy := &lazyCatalog{name: cc.Name, log: a.log, open: func() (*embedded.Catalog, error) { return a.openEmbedded(cfg) }}
	a.lazy = append(a.lazy, lazy)
	return lazy, rule, nil
}

// openEmbedded opens cfg's catalog, or takes the one a previous config
// load opened (embeddedPool).
func (a *App) openEmbedded(cfg embedded.Config) (*embedded.Catalog, error) {
	key := fmt.Sprintf("%s|%s|%s|%s|%s", cfg.Name, cfg.Database, cfg.DSN, cfg.Warehouse,
		strings.Join(cfg.AllowedLocations, "\x00"))
	v, _, err := embeddedPool.LoadOrNew(key, func() (caddy.Destructor, error) {
		cat, err := embedded.Open(context.Background(), cfg, a.log.Named("embedded"))
		return pooledCatalog{cat}, err
	})
	if err != nil {
		return nil, err
	}
	a.poolKeys.add(key)
	return v.(pooledCatalog).Catalog, nil
}

// heldKeys are the embeddedPool keys a config load holds, released at
// Cleanup; catalogs open lazily, on any goroutine.
type heldKeys struct {
	mu   sync.Mutex
	keys []string
}

func (h *heldKeys) add(k string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.keys = append(h.keys, k)
}

// take returns the keys and forgets them (nil-safe: an app that failed
// before Provision made its list holds none).
func (h *heldKeys) take() []string {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	k := h.keys
	h.keys = nil
	return k
}

// openCatalogs opens every embedded catalog not yet opened.
func (a *App) openCatalogs() error {
	for _, l := range a.lazy {
		if _, err := l.get(); err != nil {
			return err
		}
	}
	return nil
}
