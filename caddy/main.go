// Command lakegate is a Caddy binary with the Caddy standard modules a
// catalog gateway uses plus lakegate's own (the lakegate app and its HTTP
// handlers).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime/debug"
	"strings"

	"github.com/caddyserver/caddy/v2"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	// The modules of this build: caddy/modules says which and why.
	_ "github.com/lakegate/lakegate/caddy/modules"

	"github.com/lakegate/lakegate/internal/gcfloor"
	"github.com/lakegate/lakegate/modules/gateway"
	"github.com/lakegate/lakegate/telemetry"
)

func init() {
	// Caddy's own hooks for a custom build: the binary's name in usage
	// lines and completion scripts, and the root help text.
	caddy.CustomBinaryName = "lakegate"
	caddy.CustomLongDescription = longHelp
}

func main() {
	// Before Caddy reads the environment: a `tracing` handler without a
	// collector configured makes spans but sends them nowhere.
	telemetry.DisableUnrequestedTraceExport(os.Getenv, os.Setenv)
	floor, err := gcFloor(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lakegate:", err)
		os.Exit(1)
	}
	if floor > 0 {
		gcfloor.Start(floor, 100) // GOGC unset: Go's default percent above the floor
	}
	if rootHelp(os.Args[1:]) {
		printHelp(os.Stdout)
		return
	}
	if len(os.Args) >= 2 {
		if why, ok := notLakegate[os.Args[1]]; ok {
			fmt.Fprintf(os.Stderr, "lakegate %s: %s\n", os.Args[1], why)
			os.Exit(1)
		}
	}
	switch {
	case len(os.Args) == 2 && os.Args[1] == "version":
		// Caddy's own `version` names only Caddy's; an operator needs to
		// know which lakegate runs, and the Caddy under it.
		fmt.Println(gateway.VersionLine())
	case len(os.Args) >= 2 && os.Args[1] == "list-modules":
		listModules()
	default:
		caddycmd.Main()
	}
}

const longHelp = `lakegate is one gateway in front of lakehouse table catalogs: it serves the
Iceberg REST API, Unity Catalog's Delta API and Delta Sharing for every
catalog it is configured with, under one login and one policy. It is Caddy
with lakegate's modules; its configuration is a Caddyfile or Caddy JSON.

Run it in the foreground (recommended):

	$ lakegate run --config Caddyfile

Check a configuration without starting anything, or see its JSON:

	$ lakegate validate --config Caddyfile
	$ lakegate adapt --config Caddyfile

Change the running gateway's configuration, or stop it:

	$ lakegate reload --config Caddyfile
	$ lakegate stop

Documentation: README.md in the repository (install, a first
walk-through) and docs/ (the Caddyfile reference in docs/configuration.md,
a page per front door and backend kind, operating); Caddy's command-line
reference applies to the commands below: https://caddyserver.com/docs/command-line`

// rootHelp reports a request for the root help: no command, or help
// with no topic. Caddy's root help lists commands this build refuses;
// lakegate prints its own (printHelp). Help for one command is Caddy's,
// under lakegate's name.
func rootHelp(args []string) bool {
	return len(args) == 0 || (len(args) == 1 && (args[0] == "help" || args[0] == "-h" || args[0] == "--help"))
}

// printHelp writes lakegate's root help: its description, examples and
// the commands of this build, less those lakegate refuses.
func printHelp(w io.Writer) {
	root := &cobra.Command{
		Use: "lakegate", Long: longHelp,
		Example: "  $ lakegate run --config Caddyfile\n  $ lakegate reload --config Caddyfile\n  $ lakegate version",
	}
	for name, c := range caddycmd.Commands() {
		if _, refused := notLakegate[name]; !refused {
			root.AddCommand(&cobra.Command{Use: c.Name + " " + c.Usage, Short: c.Short, Run: func(*cobra.Command, []string) {}})
		}
	}
	root.SetOut(w)
	_ = root.Help()
}

// notLakegate are Caddy's commands that would replace this binary with a
// stock Caddy build downloaded from caddyserver.com (without lakegate's
// modules): lakegate refuses them and says how it is built instead.
var notLakegate = map[string]string{
	"upgrade":        "not available: it would replace lakegate with a stock Caddy from caddyserver.com; build lakegate again (README, Install)",
	"add-package":    "not available: it would replace lakegate with a stock Caddy from caddyserver.com; add the module with xcaddy (docs/install.md)",
	"remove-package": "not available: it would replace lakegate with a stock Caddy from caddyserver.com; build lakegate again (README, Install)",
}

// listModules runs Caddy's list-modules and fills in lakegate's modules.
// Caddy finds a module's version and Go module in the build info's
// dependencies, which never hold the main module: built from this
// repository, lakegate's modules come out bare, and get lakegate's
// version and module path here. (Built with xcaddy, lakegate is a
// dependency that Caddy names by itself, and this package is not used.)
func listModules() {
	own := map[string]bool{} // lakegate's module IDs
	bi, ok := debug.ReadBuildInfo()
	for _, id := range caddy.Modules() {
		if m, err := caddy.GetModule(id); ok && err == nil {
			t := reflect.TypeOf(m.New())
			if t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			own[id] = t.PkgPath() == bi.Main.Path || strings.HasPrefix(t.PkgPath(), bi.Main.Path+"/")
		}
	}
	// Caddy's own flags, read the way Caddy reads them (errors are
	// Caddy's to report).
	cmd := &cobra.Command{}
	caddycmd.Commands()["list-modules"].CobraFunc(cmd)
	_ = cmd.ParseFlags(os.Args[2:])
	versions, _ := cmd.Flags().GetBool("versions")
	packages, _ := cmd.Flags().GetBool("packages")
	asJSON, _ := cmd.Flags().GetBool("json")

	r, w, err := os.Pipe()
	if err != nil {
		caddycmd.Main()
		return
	}
	stdout, listed := os.Stdout, make(chan []byte)
	go func() { b, _ := io.ReadAll(r); listed <- b }()
	os.Stdout = w
	caddycmd.Main()
	os.Stdout = stdout
	w.Close()
	out := <-listed

	if asJSON {
		var mods []struct {
			ModuleName string `json:"module_name"`
			ModuleType string `json:"module_type"`
			Version    string `json:"version,omitempty"`
			PackageURL string `json:"package_url,omitempty"`
		}
		if json.Unmarshal(out, &mods) == nil && len(mods) > 0 {
			for i, m := range mods {
				if own[m.ModuleName] && m.PackageURL == "" {
					mods[i].Version, mods[i].PackageURL = gateway.Version(), bi.Main.Path
				}
			}
			b, _ := json.MarshalIndent(mods, "", "  ")
			out = append(b, '\n')
		}
	} else {
		lines := bytes.SplitAfter(out, []byte("\n"))
		for i, l := range lines {
			if id := strings.TrimSuffix(string(l), "\n"); own[id] && (versions || packages) {
				if versions {
					id += " " + gateway.Version()
				}
				if packages {
					id += " " + bi.Main.Path
				}
				lines[i] = []byte(id + "\n")
			}
		}
		out = bytes.Join(lines, nil)
	}
	os.Stdout.Write(out)
}
