// Command docgen writes docs/reference.md, the configuration reference,
// from the doc comments of lakegate's config structs: it parses the
// module's source (go/parser, go/doc), starting from the Caddy modules
// registered in modules/gateway and following their fields' types into
// the other packages. `go generate ./modules/gateway` runs it; its test
// fails when the committed reference is stale.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	root := flag.String("root", ".", "the module root (holding go.mod)")
	out := flag.String("out", "docs/reference.md", "the file to write, relative to -root")
	flag.Parse()
	md, err := Generate(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
	dst := filepath.Join(*root, *out)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(dst, md, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
}
