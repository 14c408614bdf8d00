package upstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/ec2rolecreds"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"

	"github.com/lakegate/lakegate/upstream/icerest"
)

// authenticator adds lakegate's own credentials to a backend request.
type authenticator interface {
	// authorize signs or decorates req (body is its payload). With
	// refresh, cached credentials are renewed first.
	authorize(req *http.Request, body []byte, refresh bool) error
	// canRefresh tells whether a 401 may be cured by renewing credentials.
	canRefresh() bool
}

func newAuthenticator(cfg RemoteConfig, base *url.URL, client *http.Client) (authenticator, error) {
	a := cfg.Auth
	switch a.Mode {
	case "", AuthNone, AuthPassthrough:
		return noAuth{}, nil
	case AuthBearer:
		if a.Token == "" {
			return nil, fmt.Errorf("remote backend: auth bearer needs a token")
		}
		return bearerAuth(a.Token), nil
	case AuthOAuth2:
		if a.ClientID == "" || a.ClientSecret == "" {
			return nil, fmt.Errorf("remote backend: auth oauth2 needs client_id and client_secret")
		}
		tokenURL := a.TokenURL
		if tokenURL == "" {
			tokenURL = base.JoinPath("v1", "oauth", "tokens").String()
		}
		return &oauth2Auth{cfg: a, tokenURL: tokenURL, client: client}, nil
	case AuthSigV4:
		return newSigV4(a)
	}
	return nil, fmt.Errorf("remote backend: unknown auth mode %q (want none, bearer, passthrough, oauth2 or sigv4)", a.Mode)
}

type noAuth struct{}

func (noAuth) authorize(*http.Request, []byte, bool) error { return nil }
func (noAuth) canRefresh() bool                            { return false }

type bearerAuth string

func (t bearerAuth) authorize(r *http.Request, _ []byte, _ bool) error {
	r.Header.Set("Authorization", "Bearer "+string(t))
	return nil
}
func (bearerAuth) canRefresh() bool { return false }

// oauth2Auth gets tokens with the client-credentials grant, caches them,
// and renews them shortly before they expire (or on demand after a 401).
type oauth2Auth struct {
	cfg      Auth
	tokenURL string
	client   *http.Client

	mu      sync.Mutex
	token   string
	renewAt time.Time
}

func (o *oauth2Auth) canRefresh() bool { return true }

func (o *oauth2Auth) authorize(r *http.Request, _ []byte, refresh bool) error {
	tok, err := o.get(r.Context(), refresh)
	if err != nil {
		return err
	}
	r.Header.Set("Authorization", "Bearer "+tok)
	return nil
}

func (o *oauth2Auth) get(ctx context.Context, refresh bool) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !refresh && o.token != "" && time.Now().Before(o.renewAt) {
		return o.token, nil
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {o.cfg.ClientID},
		"client_secret": {o.cfg.ClientSecret}}
	if o.cfg.Scope != "" {
		form.Set("scope", o.cfg.Scope)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.tokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := o.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("fetching backend token: %w", err)
	}
	defer resp.Body.Close()
	var tr struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
		Error       string `json:"error"`
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err := json.Unmarshal(body, &tr); err != nil || resp.StatusCode != http.StatusOK || tr.AccessToken == "" {
		// The token endpoint's answer is not logged or echoed: it may hold secrets.
		return "", icerest.Errorf(http.StatusBadGateway, icerest.NotAuthorized,
			"the backend's token endpoint refused lakegate's client credentials (status %d, error %q)",
			resp.StatusCode, tr.Error)
	}
	life := time.Duration(tr.ExpiresIn) * time.Second
	if life <= 0 {
		life = time.Hour
	}
	// Renew at 90% of the lifetime so no request carries an expiring token.
	o.token, o.renewAt = tr.AccessToken, time.Now().Add(life*9/10)
	return o.token, nil
}

// sigV4Auth signs requests for AWS Glue / S3 Tables Iceberg endpoints.
type sigV4Auth struct {
	creds   aws.CredentialsProvider
	signer  *v4.Signer
	region  string
	service string
}

func newSigV4(a Auth) (*sigV4Auth, error) {
	if a.Region == "" || (a.Service != "glue" && a.Service != "s3tables") {
		return nil, fmt.Errorf("remote backend: auth sigv4 needs a region and service glue or s3tables")
	}
	provider, err := sigV4Credentials(a)
	if err != nil {
		return nil, err
	}
	return &sigV4Auth{
		creds: aws.NewCredentialsCache(provider), signer: v4.NewSigner(),
		region: a.Region, service: a.Service,
	}, nil
}

// sigV4Credentials picks where SigV4 credentials come from: the keys
// given, else the AWS SDK's default chain. Only with credentials
// default_chain may that chain ask the EC2 instance metadata service
// (IMDS, 169.254.169.254): without the opt-in, a host with no credentials
// configured fails here, naming what to set, instead of probing the
// metadata service (and, on a cloud VM, silently using its role).
// Credentials the environment points at (AWS_CONTAINER_CREDENTIALS_* on
// ECS, AWS_WEB_IDENTITY_TOKEN_FILE on EKS) are configured ones and used.
func sigV4Credentials(a Auth) (aws.CredentialsProvider, error) {
	if a.Credentials != "" && a.Credentials != AWSDefaultChain {
		return nil, fmt.Errorf("remote backend: auth sigv4: unknown credentials %q (want %s, or leave it out)",
			a.Credentials, AWSDefaultChain)
	}
	if a.AccessKeyID != "" || a.SecretAccessKey != "" || a.SessionToken != "" {
		if a.AccessKeyID == "" || a.SecretAccessKey == "" {
			return nil, errors.New("remote backend: auth sigv4: access_key_id and secret_access_key go together")
		}
		if a.Profile != "" || a.Credentials != "" {
			return nil, errors.New("remote backend: auth sigv4: access_key_id excludes profile and credentials")
		}
		return credentials.NewStaticCredentialsProvider(a.AccessKeyID, a.SecretAccessKey, a.SessionToken), nil
	}
	opts := []func(*awsconfig.LoadOptions) error{awsconfig.WithRegion(a.Region)}
	if a.Profile != "" {
		opts = append(opts, awsconfig.WithSharedConfigProfile(a.Profile))
	}
	if a.Credentials == AWSDefaultChain {
		cfg, err := awsconfig.LoadDefaultConfig(context.Background(), opts...)
		if err != nil {
			return nil, fmt.Errorf("remote backend: AWS default credential chain: %w", err)
		}
		return cfg.Credentials, nil
	}
	// AWS_EC2_METADATA_DISABLED=true, whatever the environment says.
	opts = append(opts, awsconfig.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	cfg, err := awsconfig.LoadDefaultConfig(context.Background(), opts...)
	if err != nil {
		return nil, fmt.Errorf("remote backend: auth sigv4: AWS credentials: %w", err)
	}
	// With nothing else configured, the SDK's chain ends at the instance
	// role (ec2rolecreds): that is "no credentials" here.
	if cfg.Credentials == nil || aws.IsCredentialsProvider(cfg.Credentials, (*ec2rolecreds.Provider)(nil)) {
		where := "no AWS credentials are configured"
		if a.Profile != "" {
			where = fmt.Sprintf("AWS profile %q has no credentials", a.Profile)
		}
		return nil, fmt.Errorf("remote backend: auth sigv4: %s: set AWS_ACCESS_KEY_ID and "+
			"AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary keys), name a profile of the "+
			"shared AWS config files with AWS_PROFILE or `profile`, or set access_key_id and "+
			"secret_access_key; to use the EC2 instance role add `credentials %s` (lakegate asks the "+
			"instance metadata service only then)", where, AWSDefaultChain)
	}
	return cfg.Credentials, nil
}

func (s *sigV4Auth) canRefresh() bool { return false }

func (s *sigV4Auth) authorize(r *http.Request, body []byte, _ bool) error {
	creds, err := s.creds.Retrieve(r.Context())
	if err != nil {
		return fmt.Errorf("AWS credentials: %w", err)
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	r.Header.Set("X-Amz-Content-Sha256", hash)
	return s.signer.SignHTTP(r.Context(), creds, r, hash, s.service, s.region, time.Now())
}
