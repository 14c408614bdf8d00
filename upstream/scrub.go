package upstream

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
)

// redacted replaces a credential in what a client is shown.
const redacted = "[redacted]"

// minSecret is the shortest value scrubbed: shorter ones would mangle
// ordinary words of a message and are no credential anyway.
const minSecret = 4

// scrub removes lakegate's backend credentials from an error body before
// a client sees it: a backend may quote the Authorization header it got
// ("rejected credentials Bearer ...") or its configuration. Credentials
// are the configured ones (token, client secret, SigV4 keys, a password
// in the URL) and what was actually sent with this request (its
// Authorization value and each part of it, an AWS session token), in
// plain and JSON-escaped form.
func (b *Remote) scrub(sent *http.Request, body []byte) []byte {
	for _, s := range b.secretsOf(sent) {
		if len(s) < minSecret {
			continue
		}
		for _, form := range []string{s, jsonEscaped(s)} {
			if bytes.Contains(body, []byte(form)) {
				body = bytes.ReplaceAll(body, []byte(form), []byte(redacted))
			}
		}
	}
	return body
}

func (b *Remote) secretsOf(sent *http.Request) []string {
	a := b.cfg.Auth
	out := []string{a.Token, a.ClientSecret, a.SecretAccessKey, a.SessionToken}
	if p, ok := b.base.User.Password(); ok {
		out = append(out, p)
	}
	if sent == nil {
		return out
	}
	if authz := sent.Header.Get("Authorization"); authz != "" {
		// The whole value first, then its parts (a bare token, a SigV4
		// Credential=...): the longest match goes first.
		out = append(out, authz)
		for _, part := range strings.FieldsFunc(authz, func(r rune) bool { return r == ' ' || r == ',' }) {
			if scheme := strings.ToLower(part); scheme != "bearer" && scheme != "basic" && !strings.HasPrefix(scheme, "aws4-") {
				out = append(out, part)
			}
		}
	}
	return append(out, sent.Header.Get("X-Amz-Security-Token"))
}

func jsonEscaped(s string) string {
	q, _ := json.Marshal(s)
	return string(q[1 : len(q)-1])
}
