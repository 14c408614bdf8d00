package embedded

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// The SQL catalog's row types (iceberg_tables.iceberg_type).
const (
	rowTable = "TABLE"
	rowView  = "VIEW"
)

// The SQL catalog covers single-object operations; multi-table commits,
// register, view replace/rename need a few statements of our own on its
// iceberg_tables table. These helpers are the only place that knows its
// layout.

// encodedNamespacePrefix and storageKey mirror iceberg-go's SQL catalog
// namespace encoding: levels joined by ".", or a JSON list behind a marker
// when a level itself contains a dot.
const encodedNamespacePrefix = "__iceberg_namespace_v1__:"

func storageKey(ns table.Identifier) string {
	legacy := strings.Join(ns, ".")
	if !strings.Contains(legacy, encodedNamespacePrefix) &&
		!slices.ContainsFunc(ns, func(p string) bool { return strings.Contains(p, ".") }) {
		return legacy
	}
	b, _ := json.Marshal(ns)
	return encodedNamespacePrefix + string(b)
}

// withTx runs fn in one database transaction.
func (c *Catalog) withTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// insertRow adds a table or view row pointing at metadataLoc. The primary
// key (catalog, namespace, name) makes a concurrent duplicate fail.
func (c *Catalog) insertRow(ctx context.Context, tx *sql.Tx, id table.Identifier, typ, metadataLoc string) error {
	ns := catalog.NamespaceFromIdent(id)
	_, err := tx.ExecContext(ctx, c.rebind(`INSERT INTO iceberg_tables
		(catalog_name, table_namespace, table_name, iceberg_type, metadata_location)
		VALUES (?, ?, ?, ?, ?)`),
		c.cfg.Name, storageKey(ns), catalog.TableNameFromIdent(id), typ, metadataLoc)
	if err != nil {
		return fmt.Errorf("%w: %s could not be created: %v", alreadyExistsErr(typ), strings.Join(id, "."), err)
	}
	return nil
}

// swapRow moves the row of id from oldLoc to newLoc if, and only if, it
// still points at oldLoc (compare-and-swap); otherwise it reports a
// commit conflict.
func (c *Catalog) swapRow(ctx context.Context, tx *sql.Tx, id table.Identifier, typ, oldLoc, newLoc string) error {
	res, err := tx.ExecContext(ctx, c.rebind(`UPDATE iceberg_tables
		SET metadata_location = ?, previous_metadata_location = ?
		WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?
		AND metadata_location = ? AND (iceberg_type = ? OR iceberg_type IS NULL)`),
		newLoc, oldLoc, c.cfg.Name, storageKey(catalog.NamespaceFromIdent(id)),
		catalog.TableNameFromIdent(id), oldLoc, typ)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("%w: %s was changed concurrently", table.ErrCommitFailed, strings.Join(id, "."))
	}
	return nil
}

// deleteRow removes the row of id if it still points at loc; otherwise the
// object changed or went away concurrently.
func (c *Catalog) deleteRow(ctx context.Context, tx *sql.Tx, id table.Identifier, typ, loc string) error {
	res, err := tx.ExecContext(ctx, c.rebind(`DELETE FROM iceberg_tables
		WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND iceberg_type = ?
		AND metadata_location = ?`),
		c.cfg.Name, storageKey(catalog.NamespaceFromIdent(id)), catalog.TableNameFromIdent(id), typ, loc)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("%w: %s was changed concurrently", table.ErrCommitFailed, strings.Join(id, "."))
	}
	return nil
}

// renameRow moves a row to another identifier.
func (c *Catalog) renameRow(ctx context.Context, tx *sql.Tx, from, to table.Identifier, typ string) error {
	res, err := tx.ExecContext(ctx, c.rebind(`UPDATE iceberg_tables
		SET table_namespace = ?, table_name = ?
		WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND iceberg_type = ?`),
		storageKey(catalog.NamespaceFromIdent(to)), catalog.TableNameFromIdent(to),
		c.cfg.Name, storageKey(catalog.NamespaceFromIdent(from)), catalog.TableNameFromIdent(from), typ)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", alreadyExistsErr(typ), strings.Join(to, "."), err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("%w: %s", noSuchErr(typ), strings.Join(from, "."))
	}
	return nil
}

// rowLocation returns the metadata location of a table or view row, and
// whether the identifier is taken by any object at all (a table and a view
// may not share a name).
func (c *Catalog) rowLocation(ctx context.Context, id table.Identifier, typ string) (loc string, taken bool, err error) {
	var gotType sql.NullString
	var gotLoc sql.NullString
	err = c.db.QueryRowContext(ctx, c.rebind(`SELECT iceberg_type, metadata_location FROM iceberg_tables
		WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?`),
		c.cfg.Name, storageKey(catalog.NamespaceFromIdent(id)), catalog.TableNameFromIdent(id)).Scan(&gotType, &gotLoc)
	if err == sql.ErrNoRows {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	if gotType.String == typ || (!gotType.Valid && typ == rowTable) {
		return gotLoc.String, true, nil
	}
	return "", true, nil
}

// locationInUse reports whether any table or view of the catalog keeps
// its metadata under loc.
func (c *Catalog) locationInUse(ctx context.Context, loc string) (bool, error) {
	escaped := strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(strings.TrimSuffix(loc, "/"))
	var one int
	err := c.db.QueryRowContext(ctx, c.rebind(`SELECT 1 FROM iceberg_tables
		WHERE catalog_name = ? AND metadata_location LIKE ? ESCAPE '\' LIMIT 1`),
		c.cfg.Name, escaped+"/%").Scan(&one)
	if err == sql.ErrNoRows {
		return false, nil
	}
	return err == nil, err
}

func alreadyExistsErr(typ string) error {
	if typ == rowView {
		return catalog.ErrViewAlreadyExists
	}
	return catalog.ErrTableAlreadyExists
}

func noSuchErr(typ string) error {
	if typ == rowView {
		return catalog.ErrNoSuchView
	}
	return catalog.ErrNoSuchTable
}
