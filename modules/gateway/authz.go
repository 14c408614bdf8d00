package gateway

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap"

	"github.com/lakegate/lakegate/identity"
	"github.com/lakegate/lakegate/policies"
	"github.com/lakegate/lakegate/telemetry"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// IdentityConfig configures how callers authenticate to the gateway.
type IdentityConfig struct {
	// Required refuses anonymous requests with 401; otherwise a request
	// without credentials runs as the principal "anonymous".
	// Default false.
	Required bool `json:"required,omitempty"`
	// JWT accepts bearer JWTs of these issuers, each verified against its
	// JWKS (default: none).
	JWT []identity.JWTConfig `json:"jwt,omitempty"`
	// Tokens are static bearer tokens, each naming its principal (default:
	// none).
	Tokens []identity.StaticToken `json:"tokens,omitempty"`
	// Issuer makes lakegate an OAuth2 token issuer at /v1/oauth/tokens
	// (default: off).
	Issuer *identity.IssuerConfig `json:"issuer,omitempty"`
}

// guard authenticates and authorizes requests for the front doors.
type guard struct {
	required bool
	authn    identity.Chain // empty: no identity configured
	issuer   *identity.Issuer
	policy   *policies.Engine // nil: no policy configured, everything allowed
	log      *zap.Logger
}

// newGuard builds the identity chain and the policy engine; the engine
// counts into counters, which outlive the config (see policyCounters).
func newGuard(ctx context.Context, idc *IdentityConfig, pc *policies.Config, counters *policies.Counters, log *zap.Logger) (*guard, error) {
	g := &guard{log: log}
	if idc != nil {
		g.required = idc.Required
		if idc.Issuer != nil {
			iss, err := identity.NewIssuer(*idc.Issuer)
			if err != nil {
				return nil, err
			}
			if ids := idc.Issuer.LegacyClients(); len(ids) > 0 {
				log.Warn("issuer clients with secret_sha256, deprecated: an unsalted fast hash, and the "+
					"config (admin API /config/) lets a weak secret be guessed from it; give them "+
					"secret_bcrypt (Caddyfile: client_secret <id> <secret>, or client <id> <bcrypt-hash>)",
					zap.Strings("clients", ids))
			}
			if idc.Issuer.SigningSecret == "" {
				log.Warn("issuer without signing_secret: its tokens are signed with a key only this process holds " +
					"(kept across reloads, lost at restart); another replica does not accept them. Give every " +
					"replica behind one address the same signing_secret")
			}
			g.issuer = iss
			g.authn = append(g.authn, iss.Authenticator())
		}
		for _, jc := range idc.JWT {
			j, err := identity.NewJWT(jc, &http.Client{Timeout: 10 * time.Second})
			if err != nil {
				return nil, err
			}
			g.authn = append(g.authn, j)
		}
		if len(idc.Tokens) > 0 {
			st, err := identity.NewStaticTokens(idc.Tokens)
			if err != nil {
				return nil, err
			}
			g.authn = append(g.authn, st)
		}
	}
	if pc != nil {
		eng, err := policies.New(ctx, *pc, log.Named("policy"), policies.WithCounters(counters))
		if err != nil {
			return nil, err
		}
		g.policy = eng
	}
	return g, nil
}

func (g *guard) close() error {
	if g != nil && g.policy != nil {
		return g.policy.Close()
	}
	return nil
}

// authenticate names the caller. Its error is why the caller is not
// authenticated: each door answers it as a 401 of its own API.
func (g *guard) authenticate(r *http.Request) (*identity.Principal, error) {
	if len(g.authn) == 0 {
		return anonymous(r), nil
	}
	p, err := g.authn.Authenticate(r)
	switch {
	case err == nil:
		return p, nil
	case errors.Is(err, identity.ErrNoCredentials) && r.Header.Get("Authorization") != "":
		// Credentials that no authenticator recognizes are invalid, never
		// a reason to run as anonymous.
		err = errors.New("unrecognized credentials")
	case errors.Is(err, identity.ErrNoCredentials) && !g.required:
		return anonymousPrincipal, nil
	case errors.Is(err, identity.ErrNoCredentials):
		return nil, errors.New("authentication required")
	}
	g.log.Info("authentication failed", zap.String("reason", err.Error()), zap.String("client_ip", clientIP(r)))
	return nil, fmt.Errorf("invalid credentials: %w", err)
}

// anonymous is the caller when no identity is configured: scoped by a
// hash of whatever credentials it sent (a passthrough backend checks them),
// so per-principal state never mixes two callers.
func anonymous(r *http.Request) *identity.Principal {
	if a := r.Header.Get("Authorization"); a != "" {
		sum := sha256.Sum256([]byte(a))
		return &identity.Principal{ID: "credential:" + hex.EncodeToString(sum[:12])}
	}
	return anonymousPrincipal
}

// anonymousPrincipal is every caller without credentials, made once: no
// code writes to a Principal once an authenticator made it.
var anonymousPrincipal = &identity.Principal{ID: "anonymous"}

// authorize asks the policy about one operation on one resource. Any
// policy failure denies (the engine fails closed).
func (g *guard) authorize(ctx context.Context, in policies.Input) policies.Decision {
	if g.policy == nil {
		return policies.Decision{Allow: true}
	}
	ctx, span := telemetry.Start(ctx, "lakegate.policy", func() []attribute.KeyValue {
		return telemetry.Present(telemetry.AttrCatalog.String(in.Resource.Catalog),
			telemetry.AttrAPI.String(in.API), telemetry.AttrOperation.String(in.APIOperation))
	})
	start := time.Now()
	// On any failure the engine denies, with a reason safe to show.
	d, _ := g.policy.Decide(ctx, in)
	telemetry.ObservePolicy(in.Resource.Catalog, in.API, in.APIOperation, d.Allow, time.Since(start))
	telemetry.From(ctx).CountDecision(d.Allow)
	if span.IsRecording() {
		span.SetAttributes(telemetry.AttrDecision.Bool(d.Allow))
	}
	span.End()
	return d
}

// policyRequest is what a front door asks the policy, the same shape for
// every door: which API and operation (the API's own name and the Iceberg
// operation it is), who, on which catalog and resource.
type policyRequest struct {
	api       string // "iceberg", "delta", "sharing"
	apiOp     string // the API's operation name ("" = op)
	op        string // the Iceberg operationId
	principal *identity.Principal
	catalog   *catalogState // nil: the request names no catalog (a share, a storage path)
	resource  policies.Resource
	// storageAccess is what a signRequest would do to the table's files
	// ("read", "write"; "" for other operations).
	storageAccess string
}

// input builds the policy input for the request r carries.
func (q policyRequest) input(r *http.Request) policies.Input {
	res := q.resource
	res.Catalog, res.Backend = "", ""
	if q.catalog != nil {
		res.Catalog, res.Backend = q.catalog.cfg.Name, q.catalog.backendKind()
	}
	var deleg []string
	for _, d := range strings.Split(r.Header.Get("X-Iceberg-Access-Delegation"), ",") {
		if d = strings.TrimSpace(d); d != "" {
			deleg = append(deleg, d)
		}
	}
	p := q.principal
	return policies.Input{
		Principal: policies.Principal{ID: p.ID, Groups: p.Groups, Claims: p.Claims},
		Operation: q.op, API: cmp.Or(q.api, "iceberg"), APIOperation: cmp.Or(q.apiOp, q.op), Resource: res,
		Request: policies.Request{
			Method: r.Method, Path: r.URL.Path, AccessDelegation: deleg,
			HasIdempotencyKey: r.Header.Get("Idempotency-Key") != "",
			StorageAccess:     q.storageAccess,
		},
		Context: policies.Context{Time: time.Now().UTC().Format(time.RFC3339), ClientIP: clientIP(r)},
	}
}

// decide asks the policy about q.
// Every door refuses the request on a denial from decide.
func (g *guard) decide(r *http.Request, q policyRequest) policies.Decision {
	if g.policy == nil {
		return policies.Decision{Allow: true} // no input to build for no policy
	}
	d := g.authorize(r.Context(), q.input(r))
	if !d.Allow {
		telemetry.From(r.Context()).Refused()
	}
	return d
}

// denial is the text every door answers a denial with: the API's operation
// and the policy's reason.
func denial(apiOp string, d policies.Decision) string {
	return apiOp + ": " + cmp.Or(d.Reason, "denied by policy")
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// appendResources appends to out what an operation touches: the path's
// resource, or the body's (touched): the namespace being created, both
// sides of a rename, every table of a multi-table commit (each one must be
// allowed). Every name must pass checkIdentifier. Appending lets the
// common one-resource request keep its list on the caller's stack.
func appendResources(out []policies.Resource, rt icerest.Route, touched icerest.Touched) ([]policies.Resource, error) {
	if err := checkNames(rt); err != nil {
		return nil, err
	}
	switch rt.Operation {
	case icerest.OpCreateNamespace:
		// the namespace to be, so namespace-scoped roles can create below theirs
		return append(out, policies.Resource{Namespace: touched.Namespace}), checkIdentifier(touched.Namespace...)
	case icerest.OpCreateTable, icerest.OpRegisterTable, icerest.OpCreateView, icerest.OpRegisterView:
		return append(out, policies.Resource{Namespace: rt.Namespace}), checkIdentifier(touched.Name)
	case icerest.OpRenameTable, icerest.OpRenameView, icerest.OpCommitTransaction:
	default:
		return append(out, policies.Resource{Namespace: rt.Namespace, Table: rt.Table, View: rt.View, Function: rt.Function}), nil
	}
	for _, id := range touched.Identifiers {
		if err := checkIdentifier(append(slices.Clone(id.Namespace), id.Name)...); err != nil {
			return nil, err
		}
		if rt.Operation == icerest.OpRenameView {
			out = append(out, policies.Resource{Namespace: id.Namespace, View: id.Name})
		} else {
			out = append(out, policies.Resource{Namespace: id.Namespace, Table: id.Name})
		}
	}
	return out, nil
}
