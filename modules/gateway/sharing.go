package gateway

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/lakegate/lakegate/duration"
	"github.com/lakegate/lakegate/identity"
	"github.com/lakegate/lakegate/policies"
	"github.com/lakegate/lakegate/telemetry"
	"github.com/lakegate/lakegate/translate"
	"github.com/lakegate/lakegate/translate/sharing"
	"github.com/lakegate/lakegate/translate/sharing/fileurl"
	"github.com/lakegate/lakegate/upstream/icerest"
)

func init() {
	caddy.RegisterModule(SharingHandler{})
}

// SharingHandler is the Delta Sharing front door: recipients list shares
// and read shared Iceberg tables as Delta tables; data files are handed
// out as presigned S3 URLs or, for local warehouses, as lakegate's own
// signed URLs under {prefix}/files/.
type SharingHandler struct {
	// Prefix is the path the protocol is served under (default
	// /delta-sharing).
	Prefix string `json:"prefix,omitempty"`
	// Shares are what recipients may read (at least one).
	Shares []ShareConfig `json:"shares"`
	// URLLifetime is how long file URLs stay valid (default 1h).
	URLLifetime duration.Duration `json:"url_lifetime,omitempty"`
	// Planning is "auto" (the default: the backend plans when it
	// advertises scan planning) or "local" (lakegate reads the manifests).
	Planning sharing.Planning `json:"planning,omitempty"`
	// SigningKey (base64, >= 32 bytes) signs file URLs and page tokens.
	// Replicas must share it; without one, a random key is made at start
	// and URLs die with the process (default: that random key).
	SigningKey string `json:"signing_key,omitempty"`
	// PublicURL is the base URL recipients reach lakegate at (for file
	// URLs and profiles) when it is behind a proxy, Prefix included
	// (default: the request's scheme and host, then Prefix).
	PublicURL string `json:"public_url,omitempty"`
	// S3 are FileIO properties used to presign S3 URLs when a table's
	// LoadTable vends no credentials (default: none; such tables' files
	// on S3 cannot be shared).
	S3 map[string]string `json:"s3,omitempty"`
	// MaxChangeVersions bounds the versions one changes request (or query
	// with startingVersion) may span; each is one metadata file to read
	// (default 1000). A longer range is refused with that reason.
	MaxChangeVersions int `json:"max_change_versions,omitempty"`
	// ChangeDataDir is the folder lakegate writes the change files it
	// derives for versions that rewrote data files (copy-on-write delete,
	// update, merge), and serves them from. Default: lakegate/sharing-changes
	// under Caddy's data directory. "off" refuses such versions instead.
	ChangeDataDir string `json:"change_data_dir,omitempty"`
	// MaxChangeRewriteBytes bounds the data files one such version's
	// derivation reads (default 64 MiB); a larger version is refused.
	MaxChangeRewriteBytes int64 `json:"max_change_rewrite_bytes,omitempty"`

	app        *App
	server     *sharing.Server
	recipients []recipient
	log        *zap.Logger
}

// ShareConfig is a share and the recipients its bearer tokens name.
type ShareConfig struct {
	sharing.Share
	// Recipients may read the share, each with its own token (default:
	// none, nobody can).
	Recipients []RecipientConfig `json:"recipients,omitempty"`
}

// RecipientConfig is one recipient: its token is stored only as a
// SHA-256 hash (`caddy sharing-recipient` makes one).
type RecipientConfig struct {
	// Name is the recipient as logs and the policy see it (required).
	Name string `json:"name"`
	// TokenSHA256 is the hex SHA-256 of its bearer token (required).
	TokenSHA256 string `json:"token_sha256"`
	// Expires (RFC 3339) ends the token's validity; empty never does.
	Expires string `json:"expires,omitempty"`
}

type recipient struct {
	share, name string
	hash        []byte
	expires     time.Time
}

const defaultSharingPrefix = "/delta-sharing"

// sharingDoor answers in the Delta Sharing error model.
var sharingDoor = door{
	unauthorized: func(why error) error {
		return sharing.Errorf(http.StatusUnauthorized, sharing.CodeUnauthenticated, "%v", why)
	},
	write: func(w http.ResponseWriter, _ *http.Request, err error) { sharing.WriteError(w, err) },
}

// CaddyModule returns the Caddy module information.
func (SharingHandler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.lakegate_sharing",
		New: func() caddy.Module { return new(SharingHandler) },
	}
}

// Provision resolves the door's secrets and builds the translator; what
// the config must satisfy is Validate's.
func (h *SharingHandler) Provision(ctx caddy.Context) error {
	app, err := configuredApp(ctx, "lakegate_sharing")
	if err != nil {
		return err
	}
	h.app, h.log = app, ctx.Logger()
	if h.Prefix == "" {
		h.Prefix = defaultSharingPrefix
	}
	h.Prefix = "/" + strings.Trim(h.Prefix, "/")
	s := newSecrets()
	if err := s.resolveIn("lakegate_sharing signing_key", &h.SigningKey); err != nil {
		return fmt.Errorf("lakegate_sharing: %w", err)
	}
	if h.S3, err = s.resolveProperties("lakegate_sharing s3", h.S3); err != nil {
		return fmt.Errorf("lakegate_sharing: %w", err)
	}
	if h.recipients, err = recipients(h.Shares); err != nil {
		return fmt.Errorf("lakegate_sharing: %w", err)
	}
	sealer, err := h.sealer()
	if err != nil {
		return fmt.Errorf("lakegate_sharing: %w", err)
	}
	h.server = &sharing.Server{
		Shares: h.shares(), Catalogs: translate.NewCatalogs(h.app), Sealer: sealer,
		URLLifetime: h.URLLifetime.D(), Planning: h.Planning, S3: h.S3,
		MaxVersions: h.MaxChangeVersions, ChangeDir: h.changeDir(), MaxRewriteBytes: h.MaxChangeRewriteBytes,
		Log: h.log,
	}
	return nil
}

// Validate checks the shares (names, references to configured catalogs)
// and the door's options.
func (h *SharingHandler) Validate() error {
	if h.URLLifetime < 0 {
		return fmt.Errorf("lakegate_sharing: url_lifetime %s is negative", h.URLLifetime)
	}
	shares := h.shares()
	if err := sharing.Validate(shares); err != nil {
		return fmt.Errorf("lakegate_sharing: %w", err)
	}
	if err := h.checkCatalogs(shares); err != nil {
		return err
	}
	switch h.Planning {
	case "", sharing.PlanAuto, sharing.PlanLocal:
	default:
		return fmt.Errorf("lakegate_sharing: planning must be auto or local, not %q", h.Planning)
	}
	if d := h.changeDir(); d != "" && !filepath.IsAbs(d) {
		return fmt.Errorf("lakegate_sharing: change_data_dir must be an absolute path, not %q", d)
	}
	return nil
}

// shares are the configured shares without their recipients.
func (h *SharingHandler) shares() []sharing.Share {
	shares := make([]sharing.Share, len(h.Shares))
	for i, s := range h.Shares {
		shares[i] = s.Share
	}
	return shares
}

// changeDir is where derived change files live ("" when turned off).
func (h *SharingHandler) changeDir() string {
	switch h.ChangeDataDir {
	case "off":
		return ""
	case "":
		return filepath.Join(caddy.AppDataDir(), "lakegate", "sharing-changes")
	}
	return h.ChangeDataDir
}

func (h *SharingHandler) checkCatalogs(shares []sharing.Share) error {
	for _, sh := range shares {
		for _, sc := range sh.Schemas {
			for _, t := range sc.Tables {
				if _, ok := h.app.catalog(t.Catalog); !ok {
					return fmt.Errorf("lakegate_sharing: table %s.%s.%s: no catalog named %q", sh.Name, sc.Name, t.Name, t.Catalog)
				}
			}
			for _, n := range sc.Namespaces {
				if _, ok := h.app.catalog(n.Catalog); !ok {
					return fmt.Errorf("lakegate_sharing: schema %s.%s: no catalog named %q", sh.Name, sc.Name, n.Catalog)
				}
			}
		}
	}
	return nil
}

// recipients are the configured recipients of every share. A token (hash)
// configured for two recipients is refused: it could only ever
// authenticate as one of them.
func recipients(shares []ShareConfig) ([]recipient, error) {
	var out []recipient
	owners := identity.TokenOwners{}
	for _, sh := range shares {
		for _, rc := range sh.Recipients {
			hash, err := hex.DecodeString(rc.TokenSHA256)
			if err != nil || len(hash) != sha256.Size {
				return nil, fmt.Errorf("recipient %s of share %s: token_sha256 must be 64 hex digits", rc.Name, sh.Name)
			}
			if err := owners.Claim(fmt.Sprintf("recipient %s of share %s", rc.Name, sh.Name), [sha256.Size]byte(hash)); err != nil {
				return nil, err
			}
			r := recipient{share: sh.Name, name: rc.Name, hash: hash}
			if rc.Expires != "" {
				if r.expires, err = time.Parse(time.RFC3339, rc.Expires); err != nil {
					return nil, fmt.Errorf("recipient %s of share %s: expires must be RFC 3339: %v", rc.Name, sh.Name, err)
				}
			}
			out = append(out, r)
		}
	}
	return out, nil
}

func (h *SharingHandler) sealer() (*fileurl.Sealer, error) {
	if h.SigningKey == "" {
		h.log.Warn("lakegate_sharing has no signing_key: file URLs and page tokens are valid only for this process")
		return fileurl.NewSealer(fileurl.RandomKey())
	}
	key, err := base64.StdEncoding.DecodeString(h.SigningKey)
	if err != nil {
		return nil, fmt.Errorf("signing_key must be base64: %v", err)
	}
	return fileurl.NewSealer(key)
}

// ServeHTTP serves {prefix}/... and passes anything else to next.
func (h *SharingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	rel, ok := strings.CutPrefix(r.URL.EscapedPath(), h.Prefix)
	if !ok || (rel != "" && rel[0] != '/') {
		return next.ServeHTTP(w, r)
	}
	x, r := begin(h.app, w, r, "sharing")
	defer x.end()
	if strings.HasPrefix(rel, "/"+sharingFiles+"/") {
		x.hideFileToken(h.app, r)
	}
	if rel == recipientsPath {
		h.serveRecipients(x, r)
		return nil
	}
	rt, rerr := sharing.ParseRoute(r.Method, rel)
	x.rec.SetOperation(rt.Op)
	if rerr != nil {
		sharing.WriteError(x, rerr)
		return nil
	}
	if rt.Op == sharing.OpGetFile {
		// The signed URL is the credential: recipients' HTTP clients
		// fetch files without the bearer token, as with presigned S3.
		h.files(r).ServeHTTP(x, r)
		return nil
	}
	// Not admit: recipient tokens come first, and a recipient's token
	// must never ride along in the context (Serve carries the recipient
	// alone). The 401 and the record are every door's.
	who, rerr := h.authenticate(r)
	if rerr != nil {
		sharingDoor.refuse(x, r, rerr)
		return nil
	}
	x.authenticated(r, who.ID)
	translated(r, func(r *http.Request) {
		h.server.Serve(x, r, sharing.Request{
			Route: rt, Access: h.access(r, who), FilesBase: h.baseURL(r) + "/files", Principal: who.ID,
		})
	})
	return nil
}

func (h *SharingHandler) files(r *http.Request) *fileurl.Local {
	return &fileurl.Local{Sealer: h.server.Sealer, BaseURL: h.baseURL(r) + "/files"}
}

// baseURL is where recipients reach this front door.
func (h *SharingHandler) baseURL(r *http.Request) string {
	if h.PublicURL != "" {
		return strings.TrimRight(h.PublicURL, "/")
	}
	return gatewayURL(r) + h.Prefix
}

// recipientCaller is an authenticated recipient or principal.
type recipientCaller struct {
	*identity.Principal
	// share limits a recipient token to its share.
	share string
}

// authenticate accepts a share's recipient token, else whatever the
// app's identity accepts; its error is why not, which the door answers
// with a 401. Delta Sharing always needs a bearer token: without identity
// configured, only recipient tokens get in.
func (h *SharingHandler) authenticate(r *http.Request) (recipientCaller, error) {
	token, err := identity.BearerToken(r)
	if err != nil && !errors.Is(err, identity.ErrNoCredentials) {
		return recipientCaller{}, err
	}
	if err == nil {
		if rc, found := h.recipient(token); found {
			if !rc.expires.IsZero() && time.Now().After(rc.expires) {
				return recipientCaller{}, errors.New("the recipient token has expired")
			}
			return recipientCaller{Principal: &identity.Principal{ID: "recipient:" + rc.share + "/" + rc.name,
				Groups: []string{"delta-sharing-recipient"}}, share: rc.share}, nil
		}
	}
	if len(h.app.guard.authn) == 0 {
		return recipientCaller{}, errors.New("a valid recipient bearer token is required")
	}
	p, err := h.app.guard.authenticate(r)
	if err != nil {
		return recipientCaller{}, err
	}
	if p.ID == "anonymous" {
		return recipientCaller{}, errors.New("a bearer token is required")
	}
	return recipientCaller{Principal: p}, nil
}

// recipient finds the recipient whose token hashes to the configured
// hash, comparing every hash in constant time.
func (h *SharingHandler) recipient(token string) (recipient, bool) {
	sum := sha256.Sum256([]byte(token))
	var found recipient
	ok := false
	for _, rc := range h.recipients {
		if subtle.ConstantTimeCompare(sum[:], rc.hash) == 1 {
			found, ok = rc, true
		}
	}
	return found, ok
}

// icebergOps is the Iceberg operation each sharing operation performs,
// for policies written against Iceberg operation ids.
var icebergOps = map[string]string{
	sharing.OpListShares: icerest.OpListTables, sharing.OpGetShare: icerest.OpListTables,
	sharing.OpListSchemas: icerest.OpListTables, sharing.OpListTables: icerest.OpListTables,
	sharing.OpListAllTables: icerest.OpListTables, sharing.OpTableVersion: icerest.OpLoadTable,
	sharing.OpTableMetadata: icerest.OpLoadTable, sharing.OpQueryTable: icerest.OpPlanTableScan,
	sharing.OpQueryChanges: icerest.OpPlanTableScan,
}

// access is the caller's policy: a recipient sees its own share only;
// beyond that the OPA policy decides each share, schema and table (with
// api "sharing"); without a policy engine, authenticated callers may.
func (h *SharingHandler) access(r *http.Request, c recipientCaller) sharing.Access {
	return func(ctx context.Context, op string, t sharing.Target) bool {
		if c.share != "" && !strings.EqualFold(c.share, t.Share) {
			return false
		}
		res := policies.Resource{Namespace: t.Namespace, Table: t.IcebergTable,
			Share: t.Share, ShareSchema: t.Schema, ShareTable: t.Table}
		cat, _ := h.app.catalog(t.Catalog) // nil for a share or schema: no Iceberg table yet
		if rec := telemetry.From(ctx); cat != nil && rec != nil && rec.Catalog == "" {
			rec.SetCatalog(cat.cfg.Name) // the first table's catalog: a listing may span several
		}
		in := policyRequest{api: "sharing", apiOp: op, op: icebergOps[op], principal: c.Principal,
			catalog: cat, resource: res}.input(r)
		return h.app.guard.authorize(ctx, in).Allow
	}
}

// Interface guards
var (
	_ caddy.Provisioner           = (*SharingHandler)(nil)
	_ caddy.Validator             = (*SharingHandler)(nil)
	_ caddyhttp.MiddlewareHandler = (*SharingHandler)(nil)
)
