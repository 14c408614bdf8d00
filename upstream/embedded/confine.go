package embedded

import (
	"context"
	"net/http"
	"strings"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/view"

	"github.com/lakegate/lakegate/upstream/icerest"
	"github.com/lakegate/lakegate/upstream/locations"
)

// The embedded catalog reads, writes and deletes only under its warehouse
// and Config.AllowedLocations. Every location a request names (a table's,
// a view's, a namespace's, a metadata file to register, the paths a
// commit's metadata points at) is checked before anything is opened, and
// every file system the catalog opens is confined (locations.Confine), so
// a crafted metadata file cannot lead a scan plan or a purge elsewhere.
// The answer never depends on what lies outside: it is the same 403
// whether the file exists or not.

// newRule is the warehouse plus the configured extra roots.
func newRule(warehouse string, allowed []string) (*locations.Rule, error) {
	return locations.New(append([]string{warehouse}, allowed...)...)
}

// outsideLocation answers a location the request carried that is outside
// the allowed roots.
func outsideLocation(what, loc string) error {
	return icerest.Errorf(http.StatusForbidden, icerest.Forbidden,
		"%s %q is outside the catalog's warehouse and allowed locations", what, loc)
}

func (c *Catalog) checkLocation(what, loc string) error {
	if c.rule.Allows(loc) {
		return nil
	}
	return outsideLocation(what, loc)
}

// normalLocation is a client's location as a URI with a scheme, as the
// catalog stores it: an absolute path is a file: location (ClickHouse
// could not use a table whose location was stored as /tmp/...), and
// Trino's local:// (its native local file system; its register_table
// sends them) is file:. The confinement rule then decides on it.
func normalLocation(loc string) string {
	switch {
	case strings.HasPrefix(loc, "/"):
		return "file://" + loc
	case strings.HasPrefix(loc, "local://"):
		return "file://" + strings.TrimPrefix(loc, "local://")
	}
	return loc
}

// checkSchemed refuses a location a commit sets without a scheme: the
// commit is applied as sent, so it is not rewritten.
func checkSchemed(what, loc string) error {
	if loc != normalLocation(loc) {
		return badRequest("%s %q needs a scheme: %s", what, loc, normalLocation(loc))
	}
	return nil
}

func (c *Catalog) checkPathProperties(props map[string]string) error {
	for _, k := range icerest.PathProperties {
		if v, ok := props[k]; ok {
			if err := c.checkLocation("property "+k, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkTableMetadata checks every location a table's metadata names: its
// location, path properties, snapshots' manifest lists, statistics files
// and earlier metadata files.
func (c *Catalog) checkTableMetadata(meta table.Metadata) error {
	if err := c.checkLocation("table location", meta.Location()); err != nil {
		return err
	}
	if err := c.checkPathProperties(meta.Properties()); err != nil {
		return err
	}
	for _, s := range meta.Snapshots() {
		if err := c.checkLocation("manifest list", s.ManifestList); err != nil {
			return err
		}
	}
	for s := range meta.Statistics() {
		if err := c.checkLocation("statistics file", s.StatisticsPath); err != nil {
			return err
		}
	}
	for s := range meta.PartitionStatistics() {
		if err := c.checkLocation("partition statistics file", s.StatisticsPath); err != nil {
			return err
		}
	}
	for e := range meta.PreviousFiles() {
		if err := c.checkLocation("metadata log entry", e.MetadataFile); err != nil {
			return err
		}
	}
	return nil
}

func (c *Catalog) checkViewMetadata(meta view.Metadata) error {
	if err := c.checkLocation("view location", meta.Location()); err != nil {
		return err
	}
	return c.checkPathProperties(meta.Properties())
}

// checkRow refuses a committed row whose metadata file is outside (left
// by another configuration, or written to a shared database by something
// else): the file is not read, and its location is not shown.
func (c *Catalog) checkRow(typ string, id table.Identifier, loc string) error {
	if c.rule.Allows(loc) {
		return nil
	}
	return icerest.Errorf(http.StatusForbidden, icerest.Forbidden,
		"the metadata of %s %s is outside the catalog's warehouse and allowed locations", typ, dotted(id))
}

// openTable loads a table from its row through the confined file system:
// the table's scans and purges can only reach allowed locations.
func (c *Catalog) openTable(ctx context.Context, id table.Identifier) (*table.Table, error) {
	loc, _, err := c.rowLocation(ctx, id, rowTable)
	if err != nil {
		return nil, err
	}
	if loc == "" {
		return nil, noSuchTable(id)
	}
	if err := c.checkRow(rowTable, id, loc); err != nil {
		return nil, err
	}
	return table.NewFromLocation(ctx, id, loc, c.fsFunc(loc, nil), c.cat)
}

func (c *Catalog) fsFunc(loc string, props iceberg.Properties) table.FSysF {
	return func(ctx context.Context) (icebergio.IO, error) { return c.fileIO(ctx, loc, props) }
}

// checkNamespaceLocation checks a namespace's `location` property: the
// default location of every table created in it.
func (c *Catalog) checkNamespaceLocation(props map[string]string) error {
	if loc, ok := props[icerest.NamespaceLocation]; ok {
		return c.checkLocation("namespace location", loc)
	}
	return nil
}
