// Package duration is the duration type of lakegate's JSON config, for the
// packages that do not import Caddy: like caddy.Duration, it reads a Go
// duration string ("30s", "1h30m"), with days as Caddy reads them ("1d",
// "1.5d12h"), or an integer of nanoseconds, so `"connect_timeout": "5s"`
// and `"connect_timeout": 5000000000` mean the same. It writes the string
// form.
package duration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// Duration is a time.Duration in JSON config.
type Duration time.Duration

// D is the duration as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String is the Go duration string ("1m30s").
func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalJSON reads a duration string or an integer of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := Parse(s)
		if err != nil {
			return err
		}
		*d = Duration(v)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("a duration is a string such as \"30s\" or an integer of nanoseconds, not %s", b)
	}
	*d = Duration(n)
	return nil
}

// MarshalJSON writes the duration string, which UnmarshalJSON reads back.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// days are the "<number>d" terms Caddy adds to Go's duration syntax.
var days = regexp.MustCompile(`([0-9]+(?:\.[0-9]*)?|\.[0-9]+)d`)

// Parse reads a duration as caddy.ParseDuration does: Go's syntax plus
// days ("1d" is 24h), so every lakegate option takes what every Caddy
// directive takes.
func Parse(s string) (time.Duration, error) {
	var bad error
	goSyntax := days.ReplaceAllStringFunc(s, func(term string) string {
		n, err := strconv.ParseFloat(term[:len(term)-1], 64)
		if err != nil {
			bad = err
		}
		return strconv.FormatFloat(n*24, 'f', -1, 64) + "h"
	})
	v, err := time.ParseDuration(goSyntax)
	if bad != nil || err != nil {
		return 0, fmt.Errorf("invalid duration %q", s)
	}
	return v, nil
}
