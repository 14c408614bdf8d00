// Command lakegate is a Caddy binary with Caddy's standard modules plus
// lakegate's own (the lakegate app and its HTTP handlers).
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/lakegate/lakegate/modules/gateway"
)

func main() {
	caddycmd.Main()
}
