package gateway

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/lakegate/lakegate/identity"
)

// hash-secret: issuer clients are configured with a bcrypt hash of
// their secret (secret_bcrypt), and lakegate's build leaves out Caddy's own
// hash-password (it comes with basic_auth; the name is
// left to it, should a build include it). The secret is read from
// standard input, never from the command line, where it would stay in the
// shell's history and show in the process list.
func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "hash-secret",
		Usage: "[--client <id>] < secret",
		Short: "Prints the bcrypt hash of an issuer client's secret read from standard input",
		Long: `
Reads a client secret from standard input (its first line, without the
line ending) and prints its bcrypt hash (cost 10, the lowest lakegate
accepts) for an issuer client's secret_bcrypt. With --client, the
Caddyfile line that configures the client goes to standard error:

	client <id> <hash>

	printf %s "$SECRET" | lakegate hash-secret --client spark`,
		CobraFunc: func(cmd *cobra.Command) {
			cmd.Flags().String("client", "", "the client id, for the Caddyfile line on stderr")
			cmd.RunE = caddycmd.WrapCommandFuncForCobra(func(fl caddycmd.Flags) (int, error) {
				if err := hashSecretCmd(os.Stdin, os.Stdout, os.Stderr, fl.String("client")); err != nil {
					return 1, err
				}
				return 0, nil
			})
		},
	})
}

// hashSecretCmd reads the secret from in, prints its hash to out and, for
// a client id, the Caddyfile line to conf. Errors never hold the secret.
func hashSecretCmd(in io.Reader, out, conf io.Writer, client string) error {
	line, err := bufio.NewReader(io.LimitReader(in, 4096)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("reading the secret from standard input: %w", err)
	}
	secret := strings.TrimRight(line, "\r\n")
	h, err := identity.HashSecretBcrypt(secret)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(out, h); err != nil {
		return err
	}
	if client != "" {
		_, err = fmt.Fprintf(conf, "client %s %s\n", client, h)
	}
	return err
}
