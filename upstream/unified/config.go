// Package unified is the unified catalog: one virtual Iceberg REST
// catalog whose namespaces live in member catalogs, chosen by namespace
// prefix rules. It knows nothing of Caddy: the gateway hands it the
// members' pipelines (Member) and serves it as any other backend.
package unified

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lakegate/lakegate/upstream/icerest"
)

// Config routes a unified catalog's namespaces to its member catalogs.
type Config struct {
	// Routes send a namespace and everything below it to a member
	// catalog; the longest matching namespace prefix wins.
	Routes []Rule `json:"routes,omitempty"`
	// Default is the member that holds every namespace no route covers,
	// under the same name (default: none; such namespaces are then a 404
	// NoSuchNamespaceException, and creating one is refused the same way).
	Default string `json:"default,omitempty"`
}

// Rule sends the namespace Namespace and everything below it to member
// catalog Catalog.
type Rule struct {
	// Namespace is the namespace prefix, one entry per level: ["sales",
	// "eu"] covers sales.eu and every namespace below it (required).
	Namespace []string `json:"namespace"`
	// Catalog is the member catalog: the name of another catalog of the
	// gateway, embedded or remote (required).
	Catalog string `json:"catalog"`
	// As is what Namespace is called in the member (default: the same
	// levels): with namespace ["sales", "eu"] and as ["eu"], the unified
	// catalog's sales.eu.orders is the member's eu.orders.
	As []string `json:"as,omitempty"`
}

// Members are the catalogs the config names, sorted, each once.
func (c Config) Members() []string {
	var out []string
	for _, r := range c.Routes {
		out = append(out, r.Catalog)
	}
	if c.Default != "" {
		out = append(out, c.Default)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Validate checks the rules on their own (that the members exist is the
// gateway's to check): names of levels, no prefix twice, and no member
// namespace reachable under two names of the unified catalog.
func (c Config) Validate() error {
	if len(c.Routes) == 0 && c.Default == "" {
		return fmt.Errorf("a unified catalog needs routes, a default member, or both")
	}
	_, err := compile(c)
	return err
}

// mapping is a rule compiled: the unified catalog's namespaces under
// virtual are the member's under as. The default member is the mapping
// with empty prefixes.
type mapping struct {
	virtual []string
	member  string
	as      []string
}

func (m *mapping) String() string {
	if len(m.virtual) == 0 {
		return fmt.Sprintf("default %s", m.member)
	}
	return fmt.Sprintf("route %s %s as %s", strings.Join(m.virtual, "."), m.member, strings.Join(m.as, "."))
}

// toMember is virtual namespace v (under m.virtual) in the member.
func (m *mapping) toMember(v []string) []string {
	return append(slices.Clone(m.as), v[len(m.virtual):]...)
}

// router finds a namespace's member: mappings longest prefix first, the
// default (if any) last.
type router struct{ mappings []*mapping }

func compile(c Config) (*router, error) {
	rt := &router{}
	seen := map[string]bool{}
	for i, r := range c.Routes {
		as := r.As
		if as == nil {
			as = r.Namespace
		}
		switch {
		case r.Catalog == "":
			return nil, fmt.Errorf("route %d: no member catalog", i)
		case len(r.Namespace) == 0:
			return nil, fmt.Errorf("route %d (%s): no namespace", i, r.Catalog)
		case len(as) == 0:
			return nil, fmt.Errorf("route %s: as names no namespace (leave it out to keep the name)", dotted(r.Namespace))
		}
		for _, l := range append(slices.Clone(r.Namespace), as...) {
			if l == "" {
				return nil, fmt.Errorf("route %s: empty namespace level", dotted(r.Namespace))
			}
			if p := icerest.NameProblem(l); p != "" {
				return nil, fmt.Errorf("route %s: level %q %s", dotted(r.Namespace), l, p)
			}
		}
		key := strings.Join(r.Namespace, icerest.UnitSeparator)
		if seen[key] {
			return nil, fmt.Errorf("route %s is configured twice", dotted(r.Namespace))
		}
		seen[key] = true
		rt.mappings = append(rt.mappings, &mapping{virtual: slices.Clone(r.Namespace), member: r.Catalog, as: slices.Clone(as)})
	}
	slices.SortStableFunc(rt.mappings, func(a, b *mapping) int { return len(b.virtual) - len(a.virtual) })
	if c.Default != "" {
		rt.mappings = append(rt.mappings, &mapping{member: c.Default})
	}
	// One member namespace, one unified name: a mapping nested in another
	// of the same member must say what the outer one already says.
	for _, a := range rt.mappings {
		for _, b := range rt.mappings {
			if a == b || a.member != b.member || !hasPrefix(b.as, a.as) {
				continue
			}
			if !slices.Equal(b.virtual, append(slices.Clone(a.virtual), b.as[len(a.as):]...)) {
				return nil, fmt.Errorf("%s and %s both reach %s of %s under different names", a, b, dotted(b.as), b.member)
			}
		}
	}
	return rt, nil
}

// route is the mapping of virtual namespace v (non-empty), false when no
// rule covers it and there is no default.
func (rt *router) route(v []string) (*mapping, bool) {
	for _, m := range rt.mappings {
		if hasPrefix(v, m.virtual) {
			return m, true
		}
	}
	return nil, false
}

// fallback is the default member's mapping, nil without one.
func (rt *router) fallback() *mapping {
	if m := rt.mappings[len(rt.mappings)-1]; len(m.virtual) == 0 {
		return m
	}
	return nil
}

// toVirtual is member namespace mns of member in the unified catalog,
// false when no name of the unified catalog reaches it (it is outside
// every rule of the member, or shadowed by a longer rule).
func (rt *router) toVirtual(member string, mns []string) ([]string, bool) {
	for _, m := range rt.mappings {
		if m.member != member || !hasPrefix(mns, m.as) {
			continue
		}
		v := append(slices.Clone(m.virtual), mns[len(m.as):]...)
		if back, ok := rt.route(v); ok && back == m && len(v) > 0 {
			return v, true
		}
	}
	return nil, false
}

// ruleBelow reports whether a rule's prefix lies strictly below v.
func (rt *router) ruleBelow(v []string) bool {
	for _, m := range rt.mappings {
		if len(m.virtual) > len(v) && hasPrefix(m.virtual, v) {
			return true
		}
	}
	return false
}

func hasPrefix(ns, prefix []string) bool {
	return len(ns) >= len(prefix) && slices.Equal(ns[:len(prefix)], prefix)
}

func dotted(ns []string) string { return strings.Join(ns, ".") }
