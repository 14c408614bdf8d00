// Command validate loads deploy/compose/compose.yaml the way `docker
// compose config` does, with compose-go (the Compose Specification's
// reference loader): the file is checked against the Compose schema
// (unknown keys fail), interpolated and normalized. Then lakegate's own
// expectations are checked: the three services, the gateway waiting for
// healthy PostgreSQL and Redis, its own healthcheck (the binary's `health`
// command: the image has no shell), the Caddyfile bind mount that exists,
// the /data volume, a read-only root file system, the gateway's and the
// ops site's ports, published on loopback by default, and the admin port
// unpublished.
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
	published := map[uint32]string{} // container port: host IP
	for _, pc := range g.Ports {
		published[pc.Target] = pc.HostIP
	}
	for _, port := range []uint32{8181, 9180} {
		ip, ok := published[port]
		if !ok {
			return fmt.Errorf("service lakegate does not publish %d", port)
		}
		if ip != "127.0.0.1" {
			return fmt.Errorf("service lakegate publishes %d on %q, not on 127.0.0.1 (the default)", port, ip)
		}
	}
	if _, ok := published[2019]; ok {
		return fmt.Errorf("service lakegate publishes the admin API (2019), which can replace the config")
	}
	return checkHealth(g.HealthCheck)
}

// checkHealth: the gateway's healthcheck runs the image's binary (there
// is no shell to run anything else) with its health command.
func checkHealth(h *types.HealthCheckConfig) error {
	if h == nil || len(h.Test) < 3 {
		return fmt.Errorf("service lakegate has no healthcheck")
	}
	if h.Test[0] != "CMD" || h.Test[1] != "/usr/local/bin/lakegate" || h.Test[2] != "health" {
		return fmt.Errorf("service lakegate's healthcheck is %q, not [CMD /usr/local/bin/lakegate health ...] (the image has no shell)", h.Test)
	}
	if h.Timeout == nil || h.Interval == nil {
		return fmt.Errorf("service lakegate's healthcheck has no timeout or interval")
	}
	return nil
}
