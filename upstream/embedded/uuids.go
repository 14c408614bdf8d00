package embedded

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// Listings take Lakekeeper's returnUuids and returnProtectionStatus (seed
// 000): with them a page also carries namespace-uuids or table-uuids, and
// protection-status, aligned with its entries.
type listExtras struct{ uuids, protection bool }

func readListExtras(r *http.Request) (listExtras, error) {
	u, err := boolParam(r, "returnUuids")
	if err != nil {
		return listExtras{}, err
	}
	p, err := boolParam(r, "returnProtectionStatus")
	return listExtras{u, p}, err
}

// protectionStatus is the page's protection-status. The embedded catalog
// has no protection: every object can be dropped.
func (x listExtras) protectionStatus(n int) []bool {
	if !x.protection {
		return nil
	}
	return make([]bool, n)
}

// namespaceUUIDKey is the namespace property that stores a namespace's
// UUID. It is lakegate's own: hidden from clients and not theirs to set.
const namespaceUUIDKey = "lakegate.namespace-uuid"

// legacyNamespaces seeds the UUIDs of namespaces created before lakegate
// stored one: derived from the catalog and namespace names, so they are
// stable without writing on a read.
var legacyNamespaces = uuid.MustParse("5b0d1f7e-3c61-4a59-9d64-0b2f6c8e9a41")

func (c *Catalog) namespaceUUID(props iceberg.Properties, ns table.Identifier) string {
	if id := props.Get(namespaceUUIDKey, ""); id != "" {
		return id
	}
	return uuid.NewSHA1(legacyNamespaces, []byte(c.cfg.Name+"\x00"+nsKey(ns))).String()
}

// visibleProperties drops lakegate's own keys from namespace properties.
func visibleProperties(props iceberg.Properties) iceberg.Properties {
	if _, ok := props[namespaceUUIDKey]; !ok {
		return props
	}
	out := make(iceberg.Properties, len(props)-1)
	for k, v := range props {
		if k != namespaceUUIDKey {
			out[k] = v
		}
	}
	return out
}

// checkOwnKeys refuses a client's attempt to set or remove lakegate's keys.
func checkOwnKeys(keys ...string) error {
	for _, k := range keys {
		if strings.HasPrefix(k, "lakegate.") {
			return badRequest("property %q is reserved for lakegate", k)
		}
	}
	return nil
}

// namespaceUUIDs returns the UUIDs of a page of namespaces.
func (c *Catalog) namespaceUUIDs(ctx context.Context, page []table.Identifier) ([]string, error) {
	out := make([]string, len(page))
	for i, ns := range page {
		// A level listed only because a namespace below it exists (stored
		// before parents were required) has no properties of its own.
		props, err := c.cat.LoadNamespaceProperties(ctx, ns)
		if err != nil && !errors.Is(err, catalog.ErrNoSuchNamespace) {
			return nil, err
		}
		out[i] = c.namespaceUUID(props, ns)
	}
	return out, nil
}

// objectUUIDs returns the table-uuid (or view-uuid) of each table (or
// view) of a page, read from its current metadata.
func (c *Catalog) objectUUIDs(ctx context.Context, page []tableIdentifier, typ string) ([]string, error) {
	out := make([]string, len(page))
	for i, t := range page {
		id := t.ident()
		loc, _, err := c.rowLocation(ctx, id, typ)
		if err != nil {
			return nil, err
		}
		if loc == "" {
			return nil, noSuchObject(typ, id)
		}
		if typ == rowView {
			meta, err := c.readViewMetadata(ctx, loc)
			if err != nil {
				return nil, err
			}
			out[i] = meta.ViewUUID().String()
			continue
		}
		meta, err := c.readTableMetadata(ctx, loc)
		if err != nil {
			return nil, err
		}
		out[i] = meta.TableUUID().String()
	}
	return out, nil
}
