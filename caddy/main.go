// Command lakegate is a Caddy binary with Caddy's standard modules plus
// lakegate's own (the lakegate app and its HTTP handlers).
package main

import (
	"fmt"
	"os"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	"github.com/lakegate/lakegate/modules/gateway"
)

func main() {
	// Caddy's own `version` names only Caddy's; an operator needs to know
	// which lakegate runs, and the Caddy under it.
	if len(os.Args) == 2 && os.Args[1] == "version" {
		fmt.Println(gateway.VersionLine())
		return
	}
	caddycmd.Main()
}
