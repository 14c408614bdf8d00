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
	pfx := ""
	if prefix != "" {
		pfx = "/" + strings.Trim(prefix, "/")
	}
	return strings.NewReplacer(
		"/{prefix}", pfx,
		"{namespace}", EncodeNamespace(rt.Namespace, sepEscaped),
		"{table}", url.PathEscape(rt.Table),
		"{view}", url.PathEscape(rt.View),
		"{plan-id}", url.PathEscape(rt.PlanID),
	).Replace(p)
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
		OpReplaceView, OpDropView, OpRenameView, OpRegisterView:
		return true
	}
	return false
}
