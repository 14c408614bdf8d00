package icerest

import (
	"net/url"
	"strings"
)

// Path renders the route back into a request path (escaped) under prefix,
// with namespace levels joined by sepEscaped (e.g. "%1F"). An empty prefix
// gives the prefix-less form. The prefix is raw path text, inserted as is,
// as Iceberg clients do: backends advertise prefixes such as
// "catalogs/unity" (Unity Catalog) or "main%7Cwarehouse" (Nessie). It is the
// inverse of ParseRoute, used to rewrite a client's request onto a backend.
func (rt Route) Path(prefix, sepEscaped string) string {
	tmpl, ok := Endpoints[rt.Operation]
	if !ok { // getConfig, getToken
		_, p, _ := strings.Cut(endpointsOutsidePrefix[rt.Operation], " ")
		return p
	}
	_, p, _ := strings.Cut(tmpl, " ")
	// One pass over the template: a strings.Replacer made per call cost
	// more than the rest of a proxied request's rewriting.
	var b strings.Builder
	b.Grow(len(p) + len(prefix) + 64)
	for p != "" {
		i := strings.IndexAny(p, "/{")
		if i < 0 {
			b.WriteString(p)
			break
		}
		b.WriteString(p[:i])
		p = p[i:]
		if rest, ok := strings.CutPrefix(p, "/{prefix}"); ok {
			if prefix != "" {
				b.WriteString("/")
				b.WriteString(strings.Trim(prefix, "/"))
			}
			p = rest
			continue
		}
		name, rest, ok := placeholder(p)
		if !ok {
			b.WriteByte(p[0])
			p = p[1:]
			continue
		}
		switch name {
		case "namespace":
			b.WriteString(EncodeNamespace(rt.Namespace, sepEscaped))
		case "table":
			b.WriteString(url.PathEscape(rt.Table))
		case "view":
			b.WriteString(url.PathEscape(rt.View))
		case "function":
			b.WriteString(url.PathEscape(rt.Function))
		case "plan-id":
			b.WriteString(url.PathEscape(rt.PlanID))
		default:
			b.WriteString(p[:len(p)-len(rest)]) // not ours: as written
		}
		p = rest
	}
	return b.String()
}

// placeholder reads "{name}" at the start of p.
func placeholder(p string) (name, rest string, ok bool) {
	if !strings.HasPrefix(p, "{") {
		return "", p, false
	}
	end := strings.IndexByte(p, '}')
	if end < 0 {
		return "", p, false
	}
	return p[1:end], p[end+1:], true
}

// MethodOf is the HTTP method of operation op ("" for one the spec does
// not define).
func MethodOf(op string) string {
	tmpl, ok := Endpoints[op]
	if !ok {
		tmpl = endpointsOutsidePrefix[op]
	}
	m, _, _ := strings.Cut(tmpl, " ")
	return m
}

var endpointsOutsidePrefix = map[string]string{
	OpGetConfig: "GET /v1/config",
	OpGetToken:  "POST /v1/oauth/tokens",
}

// IsMutation reports whether the operation changes catalog state: these
// are the writes whose unknown outcome must never be reported as a 4xx.
func IsMutation(op string) bool {
	switch op {
	case OpCreateNamespace, OpDropNamespace, OpUpdateProperties, OpCreateTable, OpRegisterTable,
		OpUpdateTable, OpDropTable, OpRenameTable, OpCommitTransaction, OpCreateView,
		OpReplaceView, OpDropView, OpRenameView, OpRegisterView, OpUnregisterTable:
		return true
	}
	return false
}
