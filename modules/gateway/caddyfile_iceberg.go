package gateway

import (
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("lakegate_iceberg", parseIcebergHandler)
	httpcaddyfile.RegisterDirectiveOrder("lakegate_iceberg", httpcaddyfile.Before, "reverse_proxy")
}

// parseIcebergHandler parses the `lakegate_iceberg` directive.
func parseIcebergHandler(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	handler := new(IcebergHandler)
	if err := handler.UnmarshalCaddyfile(h.Dispenser); err != nil {
		return nil, err
	}
	return handler, nil
}

// UnmarshalCaddyfile reads `lakegate_iceberg`, which takes no arguments
// or options: the catalogs are the lakegate app's.
func (h *IcebergHandler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if err := noMoreArgs(d); err != nil {
		return err
	}
	return block{}.parse(d, "lakegate_iceberg")
}

// Interface guard
var _ caddyfile.Unmarshaler = (*IcebergHandler)(nil)
