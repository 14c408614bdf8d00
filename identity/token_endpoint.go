package identity

import (
	"mime"
	"net/http"
	"net/url"

	"github.com/lakegate/lakegate/apierror"
	"github.com/lakegate/lakegate/telemetry"
)

const (
	formMediaType = "application/x-www-form-urlencoded"
	maxFormBytes  = 64 << 10
	accessTokenID = "urn:ietf:params:oauth:token-type:access_token"
)

// tokenResponse is the Iceberg REST spec's OAuthTokenResponse.
type tokenResponse struct {
	AccessToken     string `json:"access_token"`
	TokenType       string `json:"token_type"`
	ExpiresIn       int64  `json:"expires_in"`
	IssuedTokenType string `json:"issued_token_type"`
}

// oauthError is the Iceberg REST spec's OAuthError, with the HTTP status.
type oauthError struct {
	status      int
	Code        string `json:"error"`
	Description string `json:"error_description,omitempty"`
	basic       bool   // client tried HTTP Basic: a 401 must carry a challenge
}

func badRequest(desc string) *oauthError {
	return &oauthError{status: http.StatusBadRequest, Code: "invalid_request", Description: desc}
}

// ServeToken is the client-credentials token endpoint (POST /v1/oauth/tokens),
// taking the form-encoded body Iceberg clients send.
func (i *Issuer) ServeToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeOAuthError(w, &oauthError{status: http.StatusMethodNotAllowed, Code: "invalid_request",
			Description: "the token endpoint only accepts POST"})
		return
	}
	c, oerr := i.tokenRequest(w, r)
	if oerr != nil {
		writeOAuthError(w, oerr)
		return
	}
	token, err := i.issue(c)
	if err != nil {
		writeOAuthError(w, &oauthError{status: http.StatusInternalServerError, Code: "server_error",
			Description: "could not sign the token"})
		return
	}
	telemetry.CountToken("client_credentials") // the one grant tokenRequest accepts
	writeJSON(w, http.StatusOK, tokenResponse{
		AccessToken:     token,
		TokenType:       "bearer",
		ExpiresIn:       int64(i.ttl.Seconds()),
		IssuedTokenType: accessTokenID,
	})
}

// tokenRequest validates the request and authenticates the client.
func (i *Issuer) tokenRequest(w http.ResponseWriter, r *http.Request) (*client, *oauthError) {
	form, oerr := readForm(w, r)
	if oerr != nil {
		return nil, oerr
	}
	switch grant := form.Get("grant_type"); grant {
	case "client_credentials":
	case "":
		return nil, badRequest("missing grant_type")
	default:
		return nil, &oauthError{status: http.StatusBadRequest, Code: "unsupported_grant_type",
			Description: "only grant_type=client_credentials is supported"}
	}
	return i.authenticateClient(r, form)
}

// readForm parses the body only: credentials in the URL would end up in
// access logs (RFC 6749 §2.3.1).
func readForm(w http.ResponseWriter, r *http.Request) (url.Values, *oauthError) {
	if r.URL.Query().Has("client_secret") {
		return nil, badRequest("client_secret must not be sent in the URL")
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != formMediaType {
		return nil, badRequest("the body must be " + formMediaType)
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return nil, badRequest("malformed form body")
	}
	for _, vs := range r.PostForm {
		if len(vs) > 1 { // RFC 6749 §3.2: parameters must not be repeated
			return nil, badRequest("a parameter is repeated")
		}
	}
	return r.PostForm, nil
}

// authenticateClient accepts client_id/client_secret in the form, HTTP Basic,
// or client_secret alone (Iceberg clients configured with a bare credential),
// but not two methods at once (RFC 6749 §2.3).
func (i *Issuer) authenticateClient(r *http.Request, form url.Values) (*client, *oauthError) {
	id, secret := form.Get("client_id"), form.Get("client_secret")
	user, pass, basic := r.BasicAuth()
	var c *client
	var ambiguous bool
	switch {
	case basic && secret != "":
		return nil, badRequest("use one client authentication method, not both")
	case basic:
		// RFC 6749 §2.3.1 form-encodes id and secret inside Basic, but many
		// clients do not: accept the secret either way.
		uid, uerr := url.QueryUnescape(user)
		upass, perr := url.QueryUnescape(pass)
		if uerr != nil || perr != nil {
			uid, upass = user, pass
		}
		if id != "" && id != uid {
			return nil, badRequest("client_id differs from the Basic credentials")
		}
		c, ambiguous = i.clientBySecret(uid, upass, pass)
	case secret != "":
		c, ambiguous = i.clientBySecret(id, secret)
	}
	if basic {
		id, _ = url.QueryUnescape(user)
	}
	telemetry.From(r.Context()).SetClient(id)
	if ambiguous {
		// Only a caller holding the secret gets here: naming the problem
		// tells it nothing it could not find out.
		return nil, &oauthError{status: http.StatusUnauthorized, Code: "invalid_client",
			Description: "this secret is more than one client's: send client_id with it", basic: basic}
	}
	if c == nil {
		return nil, &oauthError{status: http.StatusUnauthorized, Code: "invalid_client",
			Description: "client authentication failed", basic: basic}
	}
	return c, nil
}

func writeOAuthError(w http.ResponseWriter, e *oauthError) {
	if e.basic {
		w.Header().Set("WWW-Authenticate", `Basic realm="token"`)
	}
	writeJSON(w, e.status, e)
}

// writeJSON marks every answer no-store: token responses must never be cached
// by a proxy (RFC 6749 §5.1).
func writeJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	apierror.WriteJSON(w, status, v)
}
