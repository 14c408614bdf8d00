// Package embedded serves iceberg-go's SQL catalog (SQLite or PostgreSQL,
// local-filesystem or S3-compatible warehouse) as an Iceberg REST catalog.
// It is lakegate's backend kind `embedded`, and the real backend that tests
// put behind the gateway.
package embedded

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/iceberg-go"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	// iceberg-go (since v0.7) opens s3:// warehouses only once this is
	// linked.
	_ "github.com/apache/iceberg-go/io/gocloud/s3"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"go.uber.org/zap"
	_ "modernc.org/sqlite" // pure-Go database/sql driver "sqlite"

	"github.com/lakegate/lakegate/upstream/icerest"
	"github.com/lakegate/lakegate/upstream/locations"
)

// Database kinds.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// Config configures an embedded catalog.
type Config struct {
	// Name is the catalog name: the catalog_name of its rows in the
	// database (several catalogs may share one database) and the prefix it
	// advertises in /v1/config (required; in the gateway, default the
	// gateway catalog's name).
	Name string `json:"name,omitempty"`
	// Database is "sqlite" (default) or "postgres".
	Database string `json:"database,omitempty"`
	// DSN is the SQLite file path, or a PostgreSQL URL (required). In the
	// gateway a PostgreSQL password is a run-time placeholder: the whole
	// DSN ({env.LAKEGATE_CATALOG_DSN}), or the URL's password or
	// password option; a literal one is refused.
	DSN string `json:"dsn,omitempty"`
	// Warehouse is the root location for new tables: a local directory
	// (made absolute) or a URL such as file:///data or s3://bucket/prefix
	// (required).
	Warehouse string `json:"warehouse,omitempty"`
	// AllowedLocations are roots besides the warehouse (absolute paths or
	// URLs) where tables and views may live and metadata may be read.
	// Nothing outside the warehouse and these is read, written or deleted.
	// The gateway sets it from the catalog's allowed_locations.
	AllowedLocations []string `json:"-"`
	// Properties are passed to iceberg-go as catalog properties (for
	// example s3.endpoint, s3.region) and advertised as /v1/config
	// defaults, minus secrets (default: none).
	Properties map[string]string `json:"properties,omitempty"`
	// NamespaceSeparator is the decoded separator advertised in /v1/config
	// (default 0x1F). 0x1F is always accepted as well.
	NamespaceSeparator string `json:"namespace_separator,omitempty"`
	// Auth optionally protects the catalog with bearer tokens (default:
	// none).
	Auth AuthConfig `json:"auth,omitzero"`
}

// Catalog is an embedded catalog: the SQL catalog plus the HTTP handler
// that serves it. It is safe for concurrent use.
type Catalog struct {
	cfg     Config
	db      *sql.DB
	cat     *sqlcat.Catalog
	props   iceberg.Properties
	sep     string
	log     *zap.Logger
	plans   *planStore
	tokens  *tokenGuard
	rule    *locations.Rule
	rebind  func(string) string
	routeOp map[string]handlerFunc
}

// Check validates cfg and returns the rule the catalog's files will be
// confined to, touching nothing: no database, no directory. It is what a
// configuration check (`lakegate validate`) needs; Open does the rest.
func Check(cfg Config) (*locations.Rule, error) {
	p, err := prepare(cfg)
	return p.rule, err
}

// prepared is what Check derives from a Config and Open uses.
type prepared struct {
	warehouse string // an absolute URL
	rule      *locations.Rule
	tokens    *tokenGuard
}

func prepare(cfg Config) (prepared, error) {
	if cfg.Name == "" {
		return prepared{}, errors.New("embedded catalog: name is required")
	}
	if icerest.IsReservedPrefix(cfg.Name) {
		return prepared{}, fmt.Errorf("embedded catalog: name %q is reserved by the prefix-less path form", cfg.Name)
	}
	if err := checkDB(cfg); err != nil {
		return prepared{}, err
	}
	tokens, err := newTokenGuard(cfg.Auth)
	if err != nil {
		return prepared{}, err
	}
	warehouse, err := warehouseURL(cfg.Warehouse)
	if err != nil {
		return prepared{}, err
	}
	rule, err := newRule(warehouse, cfg.AllowedLocations)
	if err != nil {
		return prepared{}, fmt.Errorf("embedded catalog %q: %w", cfg.Name, err)
	}
	return prepared{warehouse: warehouse, rule: rule, tokens: tokens}, nil
}

// Open opens (creating when needed) the catalog's database and warehouse.
func Open(ctx context.Context, cfg Config, log *zap.Logger) (*Catalog, error) {
	if log == nil {
		log = zap.NewNop()
	}
	p, err := prepare(cfg)
	if err != nil {
		return nil, err
	}
	if err := makeWarehouse(p.warehouse); err != nil {
		return nil, err
	}
	db, dialect, err := openDB(cfg)
	if err != nil {
		return nil, err
	}
	props := iceberg.Properties{"warehouse": p.warehouse}
	for k, v := range cfg.Properties {
		props[k] = v
	}
	cat, err := sqlcat.NewCatalog(cfg.Name, db, dialect, props)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("embedded catalog %q: %w", cfg.Name, err)
	}
	sep := cfg.NamespaceSeparator
	if sep == "" {
		sep = icerest.UnitSeparator
	}
	c := &Catalog{
		cfg: cfg, db: db, cat: cat, props: props, sep: sep, log: log,
		plans: newPlanStore(), tokens: p.tokens, rule: p.rule, rebind: rebinder(dialect),
	}
	c.routeOp = c.handlers()
	return c, nil
}

// Close releases the database.
func (c *Catalog) Close() error {
	return errors.Join(c.cat.Close(), c.db.Close())
}

// Locations is the rule the catalog confines itself to: its warehouse
// and AllowedLocations.
func (c *Catalog) Locations() *locations.Rule { return c.rule }

// Name is the catalog's name (and advertised prefix).
func (c *Catalog) Name() string { return c.cfg.Name }

// checkDB validates the database settings without opening anything.
func checkDB(cfg Config) error {
	switch cfg.Database {
	case "", SQLite:
		if cfg.DSN == "" {
			return errors.New("embedded catalog: dsn (SQLite file path) is required")
		}
	case Postgres:
	default:
		return fmt.Errorf("embedded catalog: unknown database %q (want sqlite or postgres)", cfg.Database)
	}
	return nil
}

func openDB(cfg Config) (*sql.DB, sqlcat.SupportedDialect, error) {
	switch cfg.Database {
	case "", SQLite:
		if cfg.DSN == "" {
			return nil, "", errors.New("embedded catalog: dsn (SQLite file path) is required")
		}
		if err := os.MkdirAll(filepath.Dir(cfg.DSN), 0o755); err != nil {
			return nil, "", err
		}
		// WAL and a busy timeout on every pooled connection let concurrent
		// writers queue instead of failing with SQLITE_BUSY.
		dsn := "file:" + cfg.DSN + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_txlock=immediate"
		db, err := sql.Open("sqlite", dsn)
		return db, sqlcat.SQLite, err
	case Postgres:
		db, err := sql.Open("pgx", cfg.DSN)
		return db, sqlcat.Postgres, err
	}
	return nil, "", fmt.Errorf("embedded catalog: unknown database %q (want sqlite or postgres)", cfg.Database)
}

// rebinder turns ?-placeholders into the dialect's own.
func rebinder(d sqlcat.SupportedDialect) func(string) string {
	if d != sqlcat.Postgres {
		return func(q string) string { return q }
	}
	return func(q string) string {
		var b strings.Builder
		n := 0
		for _, r := range q {
			if r == '?' {
				n++
				fmt.Fprintf(&b, "$%d", n)
				continue
			}
			b.WriteRune(r)
		}
		return b.String()
	}
}

// warehouseURL makes a local directory an absolute file:// URL; URLs with
// a scheme are kept as given.
func warehouseURL(w string) (string, error) {
	if w == "" {
		return "", errors.New("embedded catalog: warehouse is required")
	}
	if u, err := url.Parse(w); err == nil && u.Scheme != "" && u.Scheme != "file" {
		return strings.TrimRight(w, "/"), nil
	}
	abs, err := filepath.Abs(strings.TrimPrefix(w, "file://"))
	if err != nil {
		return "", err
	}
	return "file://" + abs, nil
}

// makeWarehouse creates a local warehouse directory.
func makeWarehouse(warehouse string) error {
	if dir, ok := strings.CutPrefix(warehouse, "file://"); ok {
		return os.MkdirAll(dir, 0o755)
	}
	return nil
}
