package embedded

import (
	"net/http"
	"net/url"
	"sort"

	"github.com/lakegate/lakegate/upstream/icerest"
)

type configResponse struct {
	Defaults  map[string]string `json:"defaults"`
	Overrides map[string]string `json:"overrides"`
	Endpoints []string          `json:"endpoints"`
}

// getConfig answers GET /v1/config: the prefix to use, the namespace
// separator, and exactly the endpoints this catalog serves.
func (c *Catalog) getConfig(w http.ResponseWriter, r *http.Request, _ icerest.Route) error {
	if wh := r.URL.Query().Get("warehouse"); wh != "" && wh != c.cfg.Name {
		return icerest.Errorf(http.StatusNotFound, icerest.NoSuchWarehouse,
			"warehouse %q does not exist (this catalog serves %q)", wh, c.cfg.Name)
	}
	// Only the operator's own properties are advertised: the warehouse
	// root is an internal location, and secrets never leave.
	defaults := map[string]string{}
	for k, v := range c.cfg.Properties {
		if !icerest.IsSecretConfigKey(k) {
			defaults[k] = v
		}
	}
	endpoints := make([]string, 0, len(c.routeOp))
	for op := range c.routeOp {
		if ep, ok := icerest.Endpoints[op]; ok {
			endpoints = append(endpoints, ep)
		}
	}
	sort.Strings(endpoints)
	icerest.WriteJSON(w, http.StatusOK, configResponse{
		Defaults: defaults,
		Overrides: map[string]string{
			"prefix":              c.cfg.Name,
			"namespace-separator": url.PathEscape(c.sep),
		},
		Endpoints: endpoints,
	})
	return nil
}
