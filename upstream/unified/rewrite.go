package unified

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/lakegate/lakegate/upstream/icerest"
)

// doc is a JSON object whose fields are rewritten one by one; the rest
// pass as they are.
type doc map[string]json.RawMessage

// encode marshals v as encoding/json does, without escaping <, > and &:
// a body passes with its text as the member wrote it.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// requestBody is the request's body with the unified catalog's names
// turned into member t's, or nil when the operation's body names none.
// Table identifiers become the member's; a view's default-namespace does
// when it is in the same member, and stays as it is otherwise (the
// member could not resolve it either way). SQL text is never rewritten.
func (b *Backend) requestBody(q icerest.Request, t target) ([]byte, error) {
	op := q.Route.Operation
	var fields func(doc) error
	switch op {
	case icerest.OpCreateNamespace:
		fields = func(d doc) error { return d.set("namespace", t.ns) }
	case icerest.OpUpdateTable:
		fields = func(d doc) error { return b.identifierToMember(d, "identifier") }
	case icerest.OpRenameTable, icerest.OpRenameView:
		fields = func(d doc) error {
			if err := b.identifierToMember(d, "source"); err != nil {
				return err
			}
			return b.identifierToMember(d, "destination")
		}
	case icerest.OpCommitTransaction:
		fields = func(d doc) error {
			return d.each("table-changes", func(c doc) error { return b.identifierToMember(c, "identifier") })
		}
	case icerest.OpCreateView:
		fields = func(d doc) error {
			return d.nested("view-version", func(v doc) error { return b.defaultNamespaceToMember(v, t) })
		}
	case icerest.OpReplaceView:
		fields = func(d doc) error {
			if err := b.identifierToMember(d, "identifier"); err != nil {
				return err
			}
			return d.each("updates", func(u doc) error {
				return u.nested("view-version", func(v doc) error { return b.defaultNamespaceToMember(v, t) })
			})
		}
	default:
		return nil, nil
	}
	var d doc
	if err := json.Unmarshal(q.Body, &d); err != nil {
		return nil, icerest.Errorf(http.StatusBadRequest, icerest.BadRequest, "malformed %s request: %v", op, err)
	}
	if err := fields(d); err != nil {
		return nil, err
	}
	return encode(d)
}

// identifierToMember rewrites the TableIdentifier in field name, if any,
// to its member's namespace.
func (b *Backend) identifierToMember(d doc, name string) error {
	return d.nested(name, func(id doc) error {
		var ns []string
		if err := json.Unmarshal(id["namespace"], &ns); err != nil || len(ns) == 0 {
			return nil // vetted already; an empty namespace stays the member's to refuse
		}
		t, err := b.target(ns)
		if err != nil {
			return err
		}
		return id.set("namespace", t.ns)
	})
}

func (b *Backend) defaultNamespaceToMember(v doc, t target) error {
	var ns []string
	if json.Unmarshal(v["default-namespace"], &ns) != nil || len(ns) == 0 {
		return nil
	}
	if dt, err := b.target(ns); err == nil && dt.m.member == t.m.member {
		return v.set("default-namespace", dt.ns)
	}
	return nil
}

// answer is a member's 200 answer with the member's names turned into the
// unified catalog's, and a table's config completed with the member's
// settings (memberSettings, tableOverrides).
func (b *Backend) answer(ctx context.Context, rt icerest.Route, t target, body []byte) ([]byte, error) {
	var fields func(doc) error
	switch rt.Operation {
	case icerest.OpListTables, icerest.OpListViews:
		fields = func(d doc) error {
			return d.each("identifiers", func(id doc) error { return b.namespaceToVirtual(id, "namespace", t) })
		}
	case icerest.OpListFunctions:
		fields = func(d doc) error { return b.functionsToVirtual(d, t) }
	case icerest.OpLoadNamespaceMetadata, icerest.OpCreateNamespace:
		fields = func(d doc) error { return b.namespaceToVirtual(d, "namespace", t) }
	case icerest.OpLoadTable, icerest.OpCreateTable, icerest.OpRegisterTable:
		extra := b.memberSettings(ctx, t.mem)
		if len(extra) == 0 {
			return body, nil
		}
		fields = func(d doc) error { return tableOverrides(d, extra) }
	case icerest.OpLoadView, icerest.OpCreateView, icerest.OpReplaceView, icerest.OpRegisterView:
		fields = func(d doc) error {
			return d.nested("metadata", func(m doc) error {
				return m.each("versions", func(v doc) error { return b.namespaceToVirtual(v, "default-namespace", t) })
			})
		}
	default:
		return body, nil
	}
	var d doc
	if json.Unmarshal(body, &d) != nil {
		return body, nil // the member's pipeline checked it; pass what it passed
	}
	if err := fields(d); err != nil {
		return nil, err
	}
	return encode(d)
}

// namespaceToVirtual rewrites the member namespace in field name to its
// unified name; one no unified name reaches is left as it is.
func (b *Backend) namespaceToVirtual(d doc, name string, t target) error {
	var ns []string
	if json.Unmarshal(d[name], &ns) != nil || len(ns) == 0 {
		return nil
	}
	if v, ok := b.router.toVirtual(t.m.member, ns); ok {
		return d.set(name, v)
	}
	return nil
}

// functionsToVirtual rewrites listFunctions' identifiers (each the
// namespace's levels, then the function's name) to the unified catalog's
// namespace.
func (b *Backend) functionsToVirtual(d doc, t target) error {
	var ids [][]string
	if json.Unmarshal(d["identifiers"], &ids) != nil {
		return nil
	}
	for i, id := range ids {
		if len(id) < 2 {
			continue
		}
		if v, ok := b.router.toVirtual(t.m.member, id[:len(id)-1]); ok {
			ids[i] = append(slices.Clone(v), id[len(id)-1])
		}
	}
	return d.set("identifiers", ids)
}

// memberSettings are the settings of member mem's /v1/config that a
// client of the unified catalog would miss: its overrides, and its
// defaults that the unified catalog's /v1/config does not advertise (the
// members do not all agree on them). Keys about the catalog connection
// itself (catalogLevelKey) are not a table's. A member whose config
// cannot be had adds nothing: its answer stands as it is.
func (b *Backend) memberSettings(ctx context.Context, mem Member) map[string]string {
	cc, err := mem.Config(ctx)
	if err != nil {
		return nil
	}
	var agreed map[string]string
	if len(cc.Defaults) > 0 {
		if u, err := b.Config(ctx); err == nil {
			agreed = u.Defaults
		}
	}
	out := map[string]string{}
	for k, v := range cc.Defaults {
		if a, ok := agreed[k]; !catalogLevelKey(k) && (!ok || a != v) {
			out[k] = v
		}
	}
	for k, v := range cc.Overrides {
		if !catalogLevelKey(k) {
			out[k] = v
		}
	}
	return out
}

// tableOverrides puts a member's settings (memberSettings) into a table
// answer's `config`, leaving every key the answer sets itself. A client
// of the unified catalog gets the unified catalog's /v1/config, not the
// member's, so the member's storage settings (s3.endpoint,
// s3.path-style-access, a region, credentials it hands every client,
// io-impl...) reach the client through the table: Iceberg Java, PyIceberg
// and iceberg-go all set a table's FileIO up from the catalog's
// properties with the table's config applied over them. A member default
// put there wins over the client's own setting, as an override would: it
// is the one the member's tables are read with.
func tableOverrides(d doc, settings map[string]string) error {
	cfg := map[string]string{}
	if raw, ok := d["config"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return nil // not the spec's map of strings: left to the client
		}
	}
	changed := false
	for k, v := range settings {
		if _, set := cfg[k]; set {
			continue
		}
		cfg[k], changed = v, true
	}
	if !changed {
		return nil
	}
	return d.set("config", cfg)
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func (d doc) set(name string, v any) error {
	raw, err := encode(v)
	if err == nil {
		d[name] = raw
	}
	return err
}

// nested rewrites the object in field name by fn; a field that is absent
// or not an object is left alone.
func (d doc) nested(name string, fn func(doc) error) error {
	raw, ok := d[name]
	if !ok {
		return nil
	}
	var inner doc
	if json.Unmarshal(raw, &inner) != nil || inner == nil {
		return nil
	}
	if err := fn(inner); err != nil {
		return err
	}
	return d.set(name, inner)
}

// each rewrites every object of the array in field name by fn.
func (d doc) each(name string, fn func(doc) error) error {
	raw, ok := d[name]
	if !ok {
		return nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	for i, item := range items {
		var inner doc
		if json.Unmarshal(item, &inner) != nil || inner == nil {
			continue
		}
		if err := fn(inner); err != nil {
			return err
		}
		if items[i], _ = encode(inner); items[i] == nil {
			items[i] = item
		}
	}
	return d.set(name, items)
}
