package storage

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/duration"
)

func TestSessionPolicy(t *testing.T) {
	tbl := Place{Bucket: "lake", Prefix: "warehouse/sales.db/t"}
	readObjects := map[string]any{"Effect": "Allow", "Action": []any{"s3:GetObject"},
		"Resource": []any{"arn:aws:s3:::lake/warehouse/sales.db/t/*"}}
	list := func(b string, prefixes ...any) map[string]any {
		return map[string]any{"Effect": "Allow", "Action": []any{"s3:ListBucket"}, "Resource": []any{"arn:aws:s3:::" + b},
			"Condition": map[string]any{"StringLike": map[string]any{"s3:prefix": prefixes}}}
	}
	for _, tc := range []struct {
		name   string
		places []Place
		access Access
		want   []any
	}{
		{"read", []Place{tbl}, Read, []any{readObjects, list("lake", "warehouse/sales.db/t/*")}},
		{"write", []Place{tbl}, Write, []any{
			map[string]any{"Effect": "Allow", "Action": []any{"s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"},
				"Resource": []any{"arn:aws:s3:::lake/warehouse/sales.db/t/*"}},
			list("lake", "warehouse/sales.db/t/*")}},
		// The data and metadata paths under the location add nothing; a
		// repeated place neither.
		{"paths inside the location", []Place{{"lake", "warehouse/sales.db/t/data"}, tbl, tbl, {"lake", "warehouse/sales.db/t/metadata"}}, Read,
			[]any{readObjects, list("lake", "warehouse/sales.db/t/*")}},
		// A sibling sharing the name's start is another table: its own
		// entry, not covered by t.
		{"sibling prefix", []Place{tbl, {"lake", "warehouse/sales.db/t2"}}, Read, []any{
			map[string]any{"Effect": "Allow", "Action": []any{"s3:GetObject"},
				"Resource": []any{"arn:aws:s3:::lake/warehouse/sales.db/t/*", "arn:aws:s3:::lake/warehouse/sales.db/t2/*"}},
			list("lake", "warehouse/sales.db/t/*", "warehouse/sales.db/t2/*")}},
		{"data path in another bucket", []Place{tbl, {"data-bucket", "t/data"}}, Read, []any{
			map[string]any{"Effect": "Allow", "Action": []any{"s3:GetObject"},
				"Resource": []any{"arn:aws:s3:::data-bucket/t/data/*", "arn:aws:s3:::lake/warehouse/sales.db/t/*"}},
			list("data-bucket", "t/data/*"), list("lake", "warehouse/sales.db/t/*")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := SessionPolicy(tc.places, tc.access)
			require.NoError(t, err)
			var doc map[string]any
			require.NoError(t, json.Unmarshal(out, &doc))
			assert.Equal(t, map[string]any{"Version": "2012-10-17", "Statement": tc.want}, doc)
		})
	}
}

func TestSessionPolicyRefused(t *testing.T) {
	for name, tc := range map[string]struct {
		places []Place
		access Access
	}{
		"no place":          {nil, Read},
		"bucket root":       {[]Place{{"lake", ""}}, Read},
		"root among others": {[]Place{{"lake", "a/t"}, {"lake", ""}}, Write},
		"leading slash":     {[]Place{{"lake", "/t"}}, Read},
		"trailing slash":    {[]Place{{"lake", "t/"}}, Read},
		"dot-dot":           {[]Place{{"lake", "a/../b"}}, Read},
		"IAM wildcard *":    {[]Place{{"lake", "a/*"}}, Read},
		"IAM wildcard ?":    {[]Place{{"lake", "a/t?"}}, Read},
		"policy variable":   {[]Place{{"lake", "a/${aws:username}"}}, Read},
		"bad bucket":        {[]Place{{"WH_", "t"}}, Read},
		"unknown access":    {[]Place{{"lake", "t"}}, Access("admin")},
		"too long for STS": {func() []Place {
			var ps []Place
			for i := 0; i < 40; i++ {
				ps = append(ps, Place{"lake", "warehouse/ns/table_" + strings.Repeat("x", 20) + string(rune('a'+i%26)) + string(rune('a'+i/26))})
			}
			return ps
		}(), Read},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := SessionPolicy(tc.places, tc.access)
			assert.Error(t, err)
		})
	}
}

func TestSessionName(t *testing.T) {
	assert.Equal(t, "lakegate-writer", SessionName("writer"))
	assert.Equal(t, "lakegate-alice@example.com", SessionName("alice@example.com"))
	assert.Equal(t, "lakegate-spiffe---cluster-ns-sa", SessionName("spiffe://cluster/ns/sa"))
	assert.Equal(t, "lakegate-j-r-me", SessionName("jérôme"), "one '-' per character, not per byte")
	long := SessionName(strings.Repeat("a", 100))
	assert.Len(t, long, 64)
	assert.Equal(t, "lakegate-", SessionName("")[:9])
}

func TestVendConfigErrors(t *testing.T) {
	s3 := &S3Config{Region: "us-east-1", AccessKeyID: "{env.K}", SecretAccessKey: "{env.S}"}
	role := "arn:aws:iam::123456789012:role/lakegate-vend"
	for _, tc := range []struct {
		v    VendConfig
		want string
	}{
		{VendConfig{}, "role_arn"},
		{VendConfig{RoleARN: "lakegate-vend"}, "role_arn"},
		{VendConfig{RoleARN: "arn:aws:iam::123456789012:user/lakegate"}, "role_arn"},
		{VendConfig{RoleARN: "arn:aws:iam::1234:role/x"}, "role_arn"},
		{VendConfig{RoleARN: role, Duration: duration.Duration(10 * time.Minute)}, "duration"},
		{VendConfig{RoleARN: role, Duration: duration.Duration(13 * time.Hour)}, "duration"},
		{VendConfig{RoleARN: role, Duration: duration.Duration(-time.Hour)}, "duration"},
		{VendConfig{RoleARN: role, STSEndpoint: "sts.example.com"}, "sts_endpoint"},
		{VendConfig{RoleARN: role, STSEndpoint: "http://127.0.0.1:5000/sts"}, "sts_endpoint"},
	} {
		v := tc.v
		err := (&Config{S3: s3, VendedCredentials: &v}).Check()
		if assert.Error(t, err, "%+v", tc.v) {
			assert.Contains(t, err.Error(), tc.want)
		}
	}
	for _, v := range []VendConfig{
		{RoleARN: role},
		{RoleARN: "arn:aws-cn:iam::123456789012:role/path/to/r", Duration: duration.Duration(12 * time.Hour), STSEndpoint: "https://sts.example.com"},
	} {
		assert.NoError(t, (&Config{S3: s3, VendedCredentials: &v}).Check())
	}
	assert.Equal(t, 15*time.Minute, (&VendConfig{}).Lifetime())
}
