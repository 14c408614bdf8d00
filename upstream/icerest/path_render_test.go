package icerest

import (
	"net/url"
	"strings"
	"testing"
)

// Path renders every endpoint as the strings.Replacer it replaced did.
func TestPathRendersEveryEndpoint(t *testing.T) {
	replaced := func(rt Route, prefix, sep string) string {
		_, p, _ := strings.Cut(Endpoints[rt.Operation], " ")
		pfx := ""
		if prefix != "" {
			pfx = "/" + strings.Trim(prefix, "/")
		}
		return strings.NewReplacer("/{prefix}", pfx, "{namespace}", EncodeNamespace(rt.Namespace, sep),
			"{table}", url.PathEscape(rt.Table), "{view}", url.PathEscape(rt.View),
			"{plan-id}", url.PathEscape(rt.PlanID), "{function}", url.PathEscape(rt.Function)).Replace(p)
	}
	for op := range Endpoints {
		for _, prefix := range []string{"", "up", "/catalogs/unity/", "main%7Cwarehouse"} {
			rt := Route{Operation: op, Namespace: []string{"a b", "c/d"}, Table: "t{x}", View: "v%", PlanID: "p/1", Function: "f n"}
			if got, want := rt.Path(prefix, "%1F"), replaced(rt, prefix, "%1F"); got != want {
				t.Errorf("%s under %q: %s, want %s", op, prefix, got, want)
			}
		}
	}
	if got := (Route{Operation: OpGetConfig}).Path("x", "%1F"); got != "/v1/config" {
		t.Errorf("getConfig: %s", got)
	}
}
