package gateway

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// Missing arguments. Caddy expands {$VAR} placeholders in the text of the
// Caddyfile before it splits it into tokens, so an unset variable leaves
// no token at all (or, quoted, an empty one) and the tokens no longer say
// why. These helpers say what an option expected and, reading the
// option's line back from the file the token came from, name the {$VAR}
// placeholders there that have no default and whose variables are unset
// or empty. A {$VAR:default} placeholder (even {$VAR:}) is optional and
// never named.

// requiredEnv matches a {$VAR} placeholder without a default, as Caddy
// reads them: the name runs to the first ":" (a default) or "}".
var requiredEnv = regexp.MustCompile(`\{\$([^}:]+)\}`)

// unsetEnvVars lists the variables of the default-less {$VAR}
// placeholders on the current token's line that expanded to nothing.
// checked is false when that line could not be read back (the tokens came
// from a string, as in tests, or the line does not hold opt).
func unsetEnvVars(d *caddyfile.Dispenser, opt string) (vars []string, checked bool) {
	line, ok := sourceLine(d.File(), d.Line())
	if !ok || !strings.Contains(line, opt) {
		return nil, false
	}
	for _, m := range requiredEnv.FindAllStringSubmatch(line, -1) {
		if os.Getenv(m[1]) == "" && !slices.Contains(vars, m[1]) {
			vars = append(vars, m[1])
		}
	}
	return vars, true
}

// sourceLine is line n (from 1) of file as written, before Caddy expanded
// its placeholders.
func sourceLine(file string, n int) (string, bool) {
	if file == "" || n < 1 {
		return "", false
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", false
	}
	lines := strings.Split(string(b), "\n")
	if n > len(lines) {
		return "", false
	}
	return strings.TrimRight(lines[n-1], "\r"), true
}

// envHint says which variables are missing.
func envHint(vars []string) string {
	if len(vars) == 1 {
		return fmt.Sprintf("the environment variable %s is unset or empty ({$%s} has no default)", vars[0], vars[0])
	}
	return fmt.Sprintf("the environment variables %s are unset or empty (their placeholders have no default)",
		strings.Join(vars, ", "))
}

// argErr is the error for option opt that wanted one argument, want (such
// as "the backend's base URL"), and got got arguments.
func argErr(d *caddyfile.Dispenser, opt, want string, got int) error {
	vars, checked := unsetEnvVars(d, opt)
	switch {
	case len(vars) > 0:
		return d.Errf("%s: missing %s: %s", opt, want, envHint(vars))
	case got > 0:
		return d.Errf("%s takes one argument (%s), got %d", opt, want, got)
	case !checked:
		return d.Errf("%s: missing %s (an unset {$VAR} placeholder expands to nothing: is its variable set?)", opt, want)
	}
	return d.Errf("%s: missing %s", opt, want)
}

// argsErr is argErr for an option that wants several arguments, usage
// saying which ("recipient <name> token <token>|sha256 <hex> ...").
func argsErr(d *caddyfile.Dispenser, opt, usage string) error {
	if vars, _ := unsetEnvVars(d, opt); len(vars) > 0 {
		return d.Errf("%s: wrong arguments (want %s): %s", opt, usage, envHint(vars))
	}
	return d.Errf("%s: wrong arguments (want %s)", opt, usage)
}

// emptyArgErr is non-nil when the value of opt just read is empty because
// a default-less {$VAR} on its line expanded to nothing (a quoted
// "{$VAR}"). An empty value may be meant ("{$VAR:}"): then it is nil.
func emptyArgErr(d *caddyfile.Dispenser, opt, want, val string) error {
	if val != "" {
		return nil
	}
	if vars, _ := unsetEnvVars(d, opt); len(vars) > 0 {
		return d.Errf("%s: %s is empty: %s", opt, want, envHint(vars))
	}
	return nil
}

// argNamed reads exactly one argument of the current option into dst,
// want naming it in errors.
func argNamed(d *caddyfile.Dispenser, dst *string, want string) error {
	opt := d.Val()
	args := d.RemainingArgs()
	if len(args) != 1 {
		return argErr(d, opt, want, len(args))
	}
	if err := emptyArgErr(d, opt, want, args[0]); err != nil {
		return err
	}
	*dst = args[0]
	return nil
}

// Relative paths. A relative local path written in a Caddyfile is taken
// relative to that Caddyfile's directory (as Caddy's `import` is), so a
// Caddyfile works from any working directory; the path is made absolute
// in the adapted JSON. JSON config, and Caddyfiles adapted from a string
// (no file behind the tokens, as in tests), keep the working directory.

// caddyfileDir is the absolute directory of the file the current token
// comes from, or "" when it does not come from a file.
func caddyfileDir(d *caddyfile.Dispenser) string {
	file := d.File()
	if file == "" {
		return ""
	}
	if fi, err := os.Stat(file); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	dir, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return ""
	}
	return dir
}

// localPath resolves p against dir (a caddyfileDir) when p is a relative
// local path: not absolute, not a URL (s3://, file://), not a run-time
// placeholder ({env.X}) and not SQLite's :memory:.
func localPath(dir, p string) string {
	if dir == "" || p == "" || filepath.IsAbs(p) || strings.HasPrefix(p, ":") || strings.Contains(p, "{") {
		return p
	}
	if u, err := url.Parse(p); err == nil && u.Scheme != "" {
		return p
	}
	return filepath.Join(dir, p)
}
