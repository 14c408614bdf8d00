// Package modules is the lakegate binary's module list: Caddy's standard
// modules (modules/standard) less those a catalog gateway has no use for,
// and lakegate's own. The binary (caddy/) imports it, and so do the tests
// that adapt the docs' Caddyfile snippets, so a snippet is adapted with
// exactly the modules the build has.
package modules

import (
	// Caddy's standard modules less those a catalog
	// gateway has no use for: templates and markdown, the ACME server, PHP
	// FastCGI, forward_auth, basic_auth, file_server, the intercept, map,
	// push and timeouts handlers, the events app and virtual file systems
	// (docs/install.md). Kept: the HTTP server and its core directives
	// (caddyhttp, with tls and the acme/internal/zerossl issuers of
	// caddytls), reverse_proxy (examples/bench) with header and
	// rewrite/handle_path, encode (gzip, zstd), request_body,
	// proxy_protocol for listeners behind a load balancer, metrics,
	// tracing, log encoders, filters and writers and log_append, file
	// system storage, and the standard TLS session ticket keys (a TLS
	// server needs them).
	_ "github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	_ "github.com/caddyserver/caddy/v2/modules/caddyhttp"
	_ "github.com/caddyserver/caddy/v2/modules/caddyhttp/encode"
	_ "github.com/caddyserver/caddy/v2/modules/caddyhttp/encode/gzip"
	_ "github.com/caddyserver/caddy/v2/modules/caddyhttp/encode/zstd"
	_ "github.com/caddyserver/caddy/v2/modules/caddyhttp/headers"
	_ "github.com/caddyserver/caddy/v2/modules/caddyhttp/logging"
	_ "github.com/caddyserver/caddy/v2/modules/caddyhttp/proxyprotocol"
	_ "github.com/caddyserver/caddy/v2/modules/caddyhttp/requestbody"
	_ "github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
	_ "github.com/caddyserver/caddy/v2/modules/caddyhttp/rewrite"
	_ "github.com/caddyserver/caddy/v2/modules/caddyhttp/tracing"
	_ "github.com/caddyserver/caddy/v2/modules/caddytls"
	_ "github.com/caddyserver/caddy/v2/modules/caddytls/standardstek"
	_ "github.com/caddyserver/caddy/v2/modules/filestorage"
	_ "github.com/caddyserver/caddy/v2/modules/logging"
	_ "github.com/caddyserver/caddy/v2/modules/metrics"

	// lakegate's own: the lakegate app and its handlers.
	_ "github.com/lakegate/lakegate/modules/gateway"
)
