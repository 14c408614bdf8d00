// Command validate loads deploy/compose/compose.yaml the way `docker
// compose config` does, with compose-go (the Compose Specification's
// reference loader): the file is checked against the Compose schema
// (unknown keys fail), interpolated and normalized. Then lakegate's own
// expectations are checked: the three services, the gateway waiting for
// healthy PostgreSQL and Redis, the Caddyfile bind mount that exists, the
// /data volume, a read-only root file system and the port.
//
// It is a module of its own (deploy/compose/validate/go.mod), so lakegate's
// module does not depend on compose-go. Usage:
//
//	go run . [-print] ../compose.yaml
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
)

func main() {
	print := flag.Bool("print", false, "print the resolved project (like `docker compose config`)")
	flag.Parse()
	if flag.NArg() != 1 {
		fail("usage: validate [-print] compose.yaml")
	}
	file, err := filepath.Abs(flag.Arg(0))
	if err != nil {
		fail("%v", err)
	}
	opts, err := cli.NewProjectOptions([]string{file},
		cli.WithWorkingDirectory(filepath.Dir(file)), cli.WithOsEnv, cli.WithConsistency(true))
	if err != nil {
		fail("%v", err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		fail("%s: %v", file, err)
	}
	if *print {
		out, err := p.MarshalYAML()
		if err != nil {
			fail("%v", err)
		}
		os.Stdout.Write(out)
	}
	if err := check(p); err != nil {
		fail("%s: %v", file, err)
	}
	fmt.Printf("%s: valid Compose file (compose-go schema and model), project %q, services %v\n",
		filepath.Base(file), p.Name, p.ServiceNames())
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "validate: "+format+"\n", a...)
	os.Exit(1)
}

func check(p *types.Project) error {
	for _, name := range []string{"lakegate", "postgres", "redis"} {
		if _, ok := p.Services[name]; !ok {
			return fmt.Errorf("no service %q", name)
		}
	}
	for _, name := range []string{"postgres", "redis"} {
		if p.Services[name].HealthCheck == nil || len(p.Services[name].HealthCheck.Test) == 0 {
			return fmt.Errorf("service %s has no healthcheck (the gateway waits for it)", name)
		}
	}
	g := p.Services["lakegate"]
	if g.Image == "" {
		return fmt.Errorf("service lakegate has no image")
	}
	for _, dep := range []string{"postgres", "redis"} {
		if d, ok := g.DependsOn[dep]; !ok || d.Condition != types.ServiceConditionHealthy {
			return fmt.Errorf("service lakegate does not wait for %s to be healthy", dep)
		}
	}
	var caddyfile, data bool
	for _, v := range g.Volumes {
		switch v.Target {
		case "/etc/lakegate/Caddyfile":
			if v.Type != types.VolumeTypeBind || !v.ReadOnly {
				return fmt.Errorf("the Caddyfile is not a read-only bind mount")
			}
			if st, err := os.Stat(v.Source); err != nil || !st.Mode().IsRegular() {
				return fmt.Errorf("the Caddyfile mount's source %s is not a file", v.Source)
			}
			caddyfile = true
		case "/data":
			if v.Type != types.VolumeTypeVolume {
				return fmt.Errorf("/data is not a named volume")
			}
			data = true
		}
	}
	if !caddyfile || !data {
		return fmt.Errorf("service lakegate lacks the Caddyfile mount or the /data volume")
	}
	if !g.ReadOnly {
		return fmt.Errorf("service lakegate's root file system is not read-only")
	}
	if g.Environment["LAKEGATE_CATALOG_DSN"] == nil || g.Environment["LAKEGATE_REDIS"] == nil {
		return fmt.Errorf("service lakegate lacks LAKEGATE_CATALOG_DSN or LAKEGATE_REDIS")
	}
	port := false
	for _, pc := range g.Ports {
		port = port || pc.Target == 8181
	}
	if !port {
		return fmt.Errorf("service lakegate does not publish 8181")
	}
	return nil
}
