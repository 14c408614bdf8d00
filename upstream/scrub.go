package upstream

import (
	"net/http"
	"strings"

	"github.com/lakegate/lakegate/internal/redact"
)

// scrub removes lakegate's backend credentials from an error body before
// a client sees it: a backend may quote the Authorization header it got
// ("rejected credentials Bearer ...") or its configuration. Credentials
// are the configured ones (token, client secret, SigV4 keys, a password
// in the URL) and what was actually sent with this request (its
// Authorization value and each part of it, an AWS session token), in
// every form redact finds: plain, JSON-escaped, percent-encoded, base64
// (of the secret or of a header holding it) and cut off. Only bodies of
// failed calls are scrubbed, so a served answer costs nothing.
func (b *Remote) scrub(sent *http.Request, body []byte) []byte {
	return redact.New(b.secretsOf(sent)...).Bytes(body)
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
		// The whole value, then its parts (a bare token, a SigV4
		// Credential=...), and a Basic one's password, which a backend
		// may quote decoded.
		out = append(out, authz)
		if _, pass, ok := sent.BasicAuth(); ok {
			out = append(out, pass)
		}
		for _, part := range strings.FieldsFunc(authz, func(r rune) bool { return r == ' ' || r == ',' }) {
			if scheme := strings.ToLower(part); scheme != "bearer" && scheme != "basic" && !strings.HasPrefix(scheme, "aws4-") {
				out = append(out, part)
			}
		}
	}
	return append(out, sent.Header.Get("X-Amz-Security-Token"))
}
