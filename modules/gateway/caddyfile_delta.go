package gateway

import (
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("lakegate_delta", parseDeltaHandler)
	httpcaddyfile.RegisterDirectiveOrder("lakegate_delta", httpcaddyfile.Before, "reverse_proxy")
}

// parseDeltaHandler parses the `lakegate_delta` directive.
func parseDeltaHandler(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	handler := new(DeltaHandler)
	if err := handler.UnmarshalCaddyfile(h.Dispenser); err != nil {
		return nil, err
	}
	return handler, nil
}

// UnmarshalCaddyfile reads
//
//	lakegate_delta {
//		path_credentials <catalog> <namespace-level>...
//	}
//
// path_credentials may be repeated; the first whose catalog holds a
// location vends for it.
func (h *DeltaHandler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if err := noMoreArgs(d); err != nil {
		return err
	}
	return block{
		"path_credentials": func(d *caddyfile.Dispenser) error {
			args := d.RemainingArgs()
			if len(args) < 2 {
				return d.Errf("path_credentials needs a catalog and a namespace")
			}
			h.PathCredentials = append(h.PathCredentials, PathCredentialsSource{Catalog: args[0], Namespace: args[1:]})
			return nil
		},
	}.parse(d, "lakegate_delta")
}

// Interface guard
var _ caddyfile.Unmarshaler = (*DeltaHandler)(nil)
