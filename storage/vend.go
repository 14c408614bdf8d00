package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/lakegate/lakegate/duration"
)

// VendConfig is how a catalog vends temporary credentials: STS
// AssumeRole of RoleARN, called with the catalog's own keys, with a
// session policy that narrows the role to one table's locations.
type VendConfig struct {
	// RoleARN is the role assumed (required): it needs S3 access to the
	// warehouse; the session policy narrows it to the table.
	RoleARN string `json:"role_arn,omitempty"`
	// Duration is the credentials' lifetime (default 15m; STS allows 15m
	// to the role's maximum session duration, at most 12h).
	Duration duration.Duration `json:"duration,omitempty"`
	// STSEndpoint is an STS-compatible endpoint, http(s)://host[:port]
	// (default: AWS STS in the s3 block's region).
	STSEndpoint string `json:"sts_endpoint,omitempty"`
}

// Vended credential lifetimes: STS refuses less than 15 minutes and more
// than 12 hours.
const (
	MinVendDuration     = 15 * time.Minute
	MaxVendDuration     = 12 * time.Hour
	DefaultVendDuration = MinVendDuration
)

// roleARN is an IAM role's ARN in any partition.
var roleARN = regexp.MustCompile(`^arn:aws[a-z-]*:iam::[0-9]{12}:role/[\w+=,.@/-]{1,512}$`)

// Lifetime is the vended credentials' lifetime in effect.
func (v *VendConfig) Lifetime() time.Duration {
	if v.Duration == 0 {
		return DefaultVendDuration
	}
	return v.Duration.D()
}

func (v *VendConfig) check() error {
	if !roleARN.MatchString(v.RoleARN) {
		return fmt.Errorf("storage vended_credentials: role_arn %q is not an IAM role ARN (arn:aws:iam::<account>:role/<name>)", v.RoleARN)
	}
	if d := v.Lifetime(); d < MinVendDuration || d > MaxVendDuration {
		return fmt.Errorf("storage vended_credentials: duration %s is out of range (%s to %s, STS's bounds)", v.Duration, MinVendDuration, MaxVendDuration)
	}
	if v.STSEndpoint != "" {
		if _, err := parseEndpoint(v.STSEndpoint); err != nil {
			return fmt.Errorf("storage vended_credentials: sts_endpoint %q must be http(s)://host[:port] with no path, user or query", v.STSEndpoint)
		}
	}
	return nil
}

// Access is what vended credentials allow on a table's files.
func (a Access) writes() bool { return a == Write }

// maxSessionPolicy is STS's limit on a session policy's plain text.
const maxSessionPolicy = 2048

// policyDoc, policyStatement: an IAM policy, in the field order AWS
// documents (encoding/json keeps struct order, so the text is stable).
type policyDoc struct {
	Version   string            `json:"Version"`
	Statement []policyStatement `json:"Statement"`
}

type policyStatement struct {
	Effect    string                         `json:"Effect"`
	Action    []string                       `json:"Action"`
	Resource  []string                       `json:"Resource"`
	Condition map[string]map[string][]string `json:"Condition,omitempty"`
}

// SessionPolicy is the session policy that narrows the assumed role to
// places: the objects under each (read: GetObject; write: also PutObject,
// DeleteObject and aborting multipart uploads) and listings of each
// bucket with a prefix under them. A place at a bucket's root, or no
// place at all, is refused: the credentials would reach other tables.
func SessionPolicy(places []Place, access Access) ([]byte, error) {
	places, err := distinctPlaces(places)
	if err != nil {
		return nil, err
	}
	actions := []string{"s3:GetObject"}
	if access.writes() {
		actions = append(actions, "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload")
	} else if access != Read {
		return nil, fmt.Errorf("access %q is neither read nor write", access)
	}
	var objects []string
	prefixes := map[string][]string{}
	var buckets []string
	for _, p := range places {
		objects = append(objects, "arn:aws:s3:::"+p.Bucket+"/"+p.Prefix+"/*")
		if _, ok := prefixes[p.Bucket]; !ok {
			buckets = append(buckets, p.Bucket)
		}
		prefixes[p.Bucket] = append(prefixes[p.Bucket], p.Prefix+"/*")
	}
	doc := policyDoc{Version: "2012-10-17", Statement: []policyStatement{
		{Effect: "Allow", Action: actions, Resource: objects},
	}}
	for _, b := range buckets {
		doc.Statement = append(doc.Statement, policyStatement{
			Effect: "Allow", Action: []string{"s3:ListBucket"}, Resource: []string{"arn:aws:s3:::" + b},
			Condition: map[string]map[string][]string{"StringLike": {"s3:prefix": prefixes[b]}},
		})
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	if len(out) > maxSessionPolicy {
		return nil, fmt.Errorf("the session policy for the table's %d locations is %d bytes, over STS's %d", len(places), len(out), maxSessionPolicy)
	}
	return out, nil
}

// distinctPlaces checks places and drops repeats and places inside
// another (a table's data path is usually under its location), in a
// stable order.
func distinctPlaces(in []Place) ([]Place, error) {
	if len(in) == 0 {
		return nil, errors.New("the table has no location on S3 to scope credentials to")
	}
	for _, p := range in {
		if p.Prefix == "" || strings.HasPrefix(p.Prefix, "/") || strings.HasSuffix(p.Prefix, "/") {
			return nil, fmt.Errorf("location s3://%s/%s is a bucket's root or not a plain prefix", p.Bucket, p.Prefix)
		}
		if err := checkBucket(p.Bucket); err != nil {
			return nil, err
		}
		if err := checkKey(p.Prefix, false); err != nil {
			return nil, err
		}
		// IAM reads * and ? in a resource or a StringLike value as
		// wildcards: a prefix holding one would reach other keys.
		if strings.ContainsAny(p.Prefix, "*?$") {
			return nil, fmt.Errorf("location s3://%s/%s holds an IAM wildcard character", p.Bucket, p.Prefix)
		}
	}
	sorted := append([]Place(nil), in...)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].Bucket != sorted[j].Bucket {
			return sorted[i].Bucket < sorted[j].Bucket
		}
		return sorted[i].Prefix < sorted[j].Prefix
	})
	var out []Place
	for _, p := range sorted {
		covered := false
		for _, q := range out {
			if q.Bucket == p.Bucket && (q.Prefix == p.Prefix || strings.HasPrefix(p.Prefix, q.Prefix+"/")) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, p)
		}
	}
	return out, nil
}

// SessionName is STS's RoleSessionName for a principal: the characters
// STS allows ([A-Za-z0-9_=,.@-]; others become '-'), 2 to 64 of them.
// CloudTrail shows it, so the principal that used the credentials is
// known there too.
func SessionName(principal string) string {
	var b strings.Builder
	b.WriteString("lakegate-")
	for _, r := range principal {
		if b.Len() >= 64 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("_=,.@-", r):
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// Credentials are temporary keys vended for one table.
type Credentials struct {
	AccessKeyID, SecretAccessKey, SessionToken string
	Expires                                    time.Time
	// Places are the table's places the credentials reach (repeats and
	// places inside another left out).
	Places []Place
}

// Vendor vends credentials with STS AssumeRole, calling it with the
// catalog's own keys.
type Vendor struct {
	sts      *sts.Client
	role     string
	lifetime time.Duration
}

// NewVendor builds the vendor of cfg (secrets resolved) and v.
func NewVendor(cfg S3Config, v VendConfig) (*Vendor, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if err := v.check(); err != nil {
		return nil, err
	}
	opts := sts.Options{
		Region:      cfg.Region,
		Credentials: credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken),
	}
	if v.STSEndpoint != "" {
		opts.BaseEndpoint = aws.String(v.STSEndpoint)
	}
	return &Vendor{sts: sts.New(opts), role: v.RoleARN, lifetime: v.Lifetime()}, nil
}

// Lifetime is how long the credentials this vends last.
func (v *Vendor) Lifetime() time.Duration { return v.lifetime }

// Vend assumes the role for principal with a session policy scoped to
// places and access.
func (v *Vendor) Vend(ctx context.Context, principal string, places []Place, access Access) (Credentials, error) {
	places, err := distinctPlaces(places)
	if err != nil {
		return Credentials{}, err
	}
	pol, err := SessionPolicy(places, access)
	if err != nil {
		return Credentials{}, err
	}
	out, err := v.sts.AssumeRole(ctx, &sts.AssumeRoleInput{
		RoleArn: aws.String(v.role), RoleSessionName: aws.String(SessionName(principal)),
		Policy: aws.String(string(pol)), DurationSeconds: aws.Int32(int32(v.lifetime / time.Second)),
	})
	if err != nil {
		return Credentials{}, fmt.Errorf("STS AssumeRole: %w", err)
	}
	c := out.Credentials
	if c == nil || c.AccessKeyId == nil || c.SecretAccessKey == nil || c.SessionToken == nil || c.Expiration == nil {
		return Credentials{}, errors.New("STS AssumeRole answered without credentials")
	}
	return Credentials{AccessKeyID: *c.AccessKeyId, SecretAccessKey: *c.SecretAccessKey,
		SessionToken: *c.SessionToken, Expires: *c.Expiration, Places: places}, nil
}
