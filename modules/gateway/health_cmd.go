package gateway

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
)

// health: a probe for places that can run a command but have no curl, such
// as a Compose healthcheck in lakegate's image (one binary, no shell). It
// asks the running gateway's admin endpoint, found as `lakegate stop` and
// `reload` find it.
func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "health",
		Usage: "[--config <file> [--adapter <name>]] [--address <admin>] [--live] [--timeout <duration>]",
		Short: "Exits 0 when the running gateway is ready (or live), 1 otherwise",
		Long: `
Asks the admin endpoint of a running lakegate for /lakegate/health/ready
(with --live, /lakegate/health/live) and exits 0 on 200 ("ready" or
"degraded"), printing the answer; otherwise it prints why and exits 1.
The admin address is --address, else the admin option of --config, else
localhost:2019.

	lakegate health --config /etc/lakegate/Caddyfile`,
		CobraFunc: func(cmd *cobra.Command) {
			cmd.Flags().StringP("config", "c", "", "the configuration file whose admin address to ask")
			cmd.Flags().StringP("adapter", "a", "", "the adapter for --config")
			cmd.Flags().String("address", "", "the admin endpoint's address (overrides --config)")
			cmd.Flags().Bool("live", false, "ask whether the process serves, not whether it is ready")
			cmd.Flags().Duration("timeout", 5*time.Second, "how long to wait for the answer")
			cmd.RunE = caddycmd.WrapCommandFuncForCobra(func(fl caddycmd.Flags) (int, error) {
				addr, err := caddycmd.DetermineAdminAPIAddress(fl.String("address"), nil, fl.String("config"), fl.String("adapter"))
				if err != nil {
					return 1, err
				}
				if err := healthCmd(addr, fl.Bool("live"), fl.Duration("timeout"), os.Stdout); err != nil {
					return 1, err
				}
				return 0, nil
			})
		},
	})
}

// healthCmd asks addr's health endpoint and prints its answer to out; an
// answer other than 200, or none within timeout, is the error.
func healthCmd(addr string, live bool, timeout time.Duration, out io.Writer) error {
	path := "/lakegate/health/ready"
	if live {
		path = "/lakegate/health/live"
	}
	type answer struct {
		body []byte
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		// Caddy's own client for its admin endpoint: TCP or unix socket,
		// the Origin it expects; a status of 400 or more is its error,
		// with the body (the reason, per catalog).
		resp, err := caddycmd.AdminAPIRequest(addr, http.MethodGet, path, nil, nil)
		if err != nil {
			done <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		done <- answer{body, err}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	select {
	case a := <-done:
		if a.err != nil {
			return fmt.Errorf("%s%s: %w", addr, path, a.err)
		}
		_, err := out.Write(a.body)
		return err
	case <-ctx.Done():
		return fmt.Errorf("%s%s: no answer within %s", addr, path, timeout)
	}
}
