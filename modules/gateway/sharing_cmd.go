package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"time"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/lakegate/lakegate/translate/sharing"
)

func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "sharing-profile",
		Usage: "--endpoint <url> [--token <token>] [--name <recipient>] [--expires <rfc3339>]",
		Short: "Prints a Delta Sharing recipient profile file",
		Long: `
Prints a Delta Sharing profile file (shareCredentialsVersion, endpoint,
bearerToken, expirationTime) for a recipient on stdout, and on stderr the
Caddyfile line that grants the token to a share, with only its SHA-256:

	recipient <name> sha256 <hex> [expires <rfc3339>]

Without --token, a new random token is made.`,
		CobraFunc: func(cmd *cobra.Command) {
			cmd.Flags().String("endpoint", "", "the sharing endpoint, e.g. https://lakegate.example/delta-sharing")
			cmd.Flags().String("token", "", "the recipient's bearer token (default: a new random one)")
			cmd.Flags().String("name", "recipient", "the recipient's name in the Caddyfile line")
			cmd.Flags().String("expires", "", "when the token stops working (RFC 3339)")
			cmd.RunE = caddycmd.WrapCommandFuncForCobra(cmdSharingProfile)
		},
	})
}

func cmdSharingProfile(fl caddycmd.Flags) (int, error) {
	endpoint, token := fl.String("endpoint"), fl.String("token")
	name, expires := fl.String("name"), fl.String("expires")
	if err := writeProfile(os.Stdout, os.Stderr, endpoint, token, name, expires); err != nil {
		return 1, err
	}
	return 0, nil
}

// writeProfile prints the profile to out and the recipient line to conf.
func writeProfile(out, conf io.Writer, endpoint, token, name, expires string) error {
	if endpoint == "" {
		return fmt.Errorf("--endpoint is required")
	}
	var exp time.Time
	if expires != "" {
		var err error
		if exp, err = time.Parse(time.RFC3339, expires); err != nil {
			return fmt.Errorf("--expires must be RFC 3339: %v", err)
		}
	}
	if token == "" {
		token = sharing.NewToken()
	}
	sum := sha256.Sum256([]byte(token))
	line := fmt.Sprintf("recipient %s sha256 %s", name, hex.EncodeToString(sum[:]))
	if expires != "" {
		line += " expires " + exp.UTC().Format(time.RFC3339)
	}
	if _, err := out.Write(sharing.NewProfile(endpoint, token, exp).JSON()); err != nil {
		return err
	}
	_, err := fmt.Fprintln(conf, line)
	return err
}
