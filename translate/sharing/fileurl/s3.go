package fileurl

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Iceberg FileIO property keys read by S3Presigner. The names follow the
// Iceberg spec (and iceberg-go's io package), so catalog-vended credentials
// can be passed through unchanged.
const (
	PropS3AccessKeyID     = "s3.access-key-id"
	PropS3SecretAccessKey = "s3.secret-access-key"
	PropS3SessionToken    = "s3.session-token"
	PropS3Region          = "s3.region"
	PropClientRegion      = "client.region"
	PropS3Endpoint        = "s3.endpoint"
	PropS3PathStyleAccess = "s3.path-style-access"
	// PropS3ForceVirtualAddressing is iceberg-go's inverse spelling of
	// path-style access; honoured when s3.path-style-access is absent.
	PropS3ForceVirtualAddressing = "s3.force-virtual-addressing"
)

// MaxS3Lifetime is SigV4's hard limit on presigned URL validity.
const MaxS3Lifetime = 7 * 24 * time.Hour

// defaultCustomEndpointRegion is used only with a custom endpoint: S3
// look-alikes such as MinIO accept any region and default to this one.
const defaultCustomEndpointRegion = "us-east-1"

// S3Presigner presigns GetObject URLs with one table's credentials. Build
// one per table (or per query) and reuse it for all of its files.
type S3Presigner struct {
	client *s3.PresignClient
}

// NewS3Presigner builds a presigner from Iceberg FileIO properties. It
// deliberately never consults the environment, shared config files or
// instance metadata: lakegate may only use the table's vended or configured
// credentials, so missing ones are an error, not a fallback.
func NewS3Presigner(props map[string]string) (*S3Presigner, error) {
	opts, err := s3Options(props)
	if err != nil {
		return nil, err
	}
	return &S3Presigner{client: s3.NewPresignClient(s3.New(opts))}, nil
}

// Presign returns a GET URL for fileURI (s3://, s3a:// or s3n://) valid for
// lifetime, which must be between one second and MaxS3Lifetime.
func (p *S3Presigner) Presign(ctx context.Context, fileURI string, lifetime time.Duration) (string, error) {
	if lifetime < time.Second || lifetime > MaxS3Lifetime {
		// Zero would silently become the SDK's 15-minute default.
		return "", fmt.Errorf("fileurl: presign lifetime %v outside [1s, %v]", lifetime, MaxS3Lifetime)
	}
	bucket, key, err := parseS3URI(fileURI)
	if err != nil {
		return "", err
	}
	req, err := p.client.PresignGetObject(ctx, &s3.GetObjectInput{
		Bucket: aws.String(bucket),
		Key:    aws.String(key),
	}, s3.WithPresignExpires(lifetime))
	if err != nil {
		return "", fmt.Errorf("fileurl: presign %s: %w", fileURI, err)
	}
	return req.URL, nil
}

// s3Options maps FileIO properties onto client options, building the
// client from scratch (not config.LoadDefaultConfig) so no ambient
// credentials or region can leak in.
func s3Options(props map[string]string) (s3.Options, error) {
	creds, err := staticCredentials(props)
	if err != nil {
		return s3.Options{}, err
	}
	endpoint, err := s3Endpoint(props)
	if err != nil {
		return s3.Options{}, err
	}
	region, err := s3Region(props, endpoint != "")
	if err != nil {
		return s3.Options{}, err
	}
	pathStyle, err := s3PathStyle(props, endpoint != "")
	if err != nil {
		return s3.Options{}, err
	}
	o := s3.Options{
		Region:       region,
		Credentials:  creds,
		UsePathStyle: pathStyle,
		// Express One Zone session auth would make presigning call
		// CreateSession over the network; plain SigV4 works offline.
		DisableS3ExpressSessionAuth: aws.Bool(true),
		// Otherwise GetObject may sign an x-amz-checksum-mode header that
		// Delta Sharing clients won't send, breaking the signature.
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
	}
	if endpoint != "" {
		o.BaseEndpoint = aws.String(endpoint)
	}
	return o, nil
}

// staticCredentials requires both key halves and names every missing one.
func staticCredentials(props map[string]string) (aws.CredentialsProvider, error) {
	id, secret := props[PropS3AccessKeyID], props[PropS3SecretAccessKey]
	var missing []string
	if id == "" {
		missing = append(missing, PropS3AccessKeyID)
	}
	if secret == "" {
		missing = append(missing, PropS3SecretAccessKey)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("fileurl: cannot presign S3 URLs: missing %s in table properties", strings.Join(missing, " and "))
	}
	return credentials.NewStaticCredentialsProvider(id, secret, props[PropS3SessionToken]), nil
}

// s3Region prefers s3.region, then client.region. Real AWS needs the
// bucket's true region for SigV4, so only custom endpoints get a default.
func s3Region(props map[string]string, customEndpoint bool) (string, error) {
	for _, k := range []string{PropS3Region, PropClientRegion} {
		if r := props[k]; r != "" {
			return r, nil
		}
	}
	if customEndpoint {
		return defaultCustomEndpointRegion, nil
	}
	return "", fmt.Errorf("fileurl: cannot presign S3 URLs: missing %s (or %s) in table properties", PropS3Region, PropClientRegion)
}

// s3Endpoint validates s3.endpoint; recipients must be able to reach it, so
// it has to be an absolute http(s) URL.
func s3Endpoint(props map[string]string) (string, error) {
	ep := props[PropS3Endpoint]
	if ep == "" {
		return "", nil
	}
	u, err := url.Parse(ep)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("fileurl: %s %q must be an absolute http(s) URL", PropS3Endpoint, ep)
	}
	return ep, nil
}

// s3PathStyle resolves addressing style: s3.path-style-access wins, then
// s3.force-virtual-addressing, else path style exactly when a custom
// endpoint is set (iceberg-go's default, since MinIO-like servers rarely
// have wildcard DNS).
func s3PathStyle(props map[string]string, customEndpoint bool) (bool, error) {
	if v, ok := props[PropS3PathStyleAccess]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("fileurl: %s %q is not a boolean", PropS3PathStyleAccess, v)
		}
		return b, nil
	}
	if v, ok := props[PropS3ForceVirtualAddressing]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("fileurl: %s %q is not a boolean", PropS3ForceVirtualAddressing, v)
		}
		return !b, nil
	}
	return customEndpoint, nil
}

var errBadS3URI = errors.New("fileurl: not an s3://, s3a:// or s3n:// object URI")

// parseS3URI splits scheme://bucket/key without URL-decoding: Iceberg paths
// are raw object keys, and partition directories often contain literal
// '%' escapes (name=a%20b) that must reach S3 unchanged.
func parseS3URI(uri string) (bucket, key string, err error) {
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok {
		return "", "", fmt.Errorf("%w: %q", errBadS3URI, uri)
	}
	switch strings.ToLower(scheme) {
	case "s3", "s3a", "s3n":
	default:
		return "", "", fmt.Errorf("%w: %q", errBadS3URI, uri)
	}
	bucket, key, _ = strings.Cut(rest, "/")
	if bucket == "" || key == "" {
		return "", "", fmt.Errorf("%w: %q needs a bucket and an object key", errBadS3URI, uri)
	}
	return bucket, key, nil
}
