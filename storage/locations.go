package storage

import (
	"fmt"
	"net/url"
	"strings"
)

// Place is one of a table's locations on S3: a bucket and a key prefix
// (no trailing slash). Keys under it are the table's.
type Place struct {
	Bucket string
	Prefix string
}

// TableLocations reads a table's locations (its location, write.data.path,
// write.metadata.path) as S3 places. A location that is not s3:// (or
// s3a://, s3n://), that is a bucket's root, or whose path is not plain
// (encoded, empty, "." or ".." segments) is left out: nothing is signed
// under it.
func TableLocations(locs ...string) []Place {
	var out []Place
	for _, loc := range locs {
		if p, err := ParsePlace(loc); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// ParsePlace reads one s3:// location.
func ParsePlace(loc string) (Place, error) {
	u, err := url.Parse(loc)
	if err != nil || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery ||
		strings.ContainsAny(loc, "%#?\\") {
		return Place{}, fmt.Errorf("location %q is not a plain URL", loc)
	}
	switch strings.ToLower(u.Scheme) {
	case "s3", "s3a", "s3n":
	default:
		return Place{}, fmt.Errorf("location %q is not on S3", loc)
	}
	if err := checkBucket(u.Host); err != nil {
		return Place{}, err
	}
	prefix := strings.TrimSuffix(strings.TrimPrefix(u.Path, "/"), "/")
	if prefix == "" {
		return Place{}, fmt.Errorf("location %q is a bucket's root", loc)
	}
	if err := checkKey(prefix, false); err != nil {
		return Place{}, err
	}
	return Place{Bucket: u.Host, Prefix: prefix}, nil
}

// contains tells whether key (a listing's prefix too) is under p.
func (p Place) contains(bucket, key string) bool {
	return bucket == p.Bucket && strings.HasPrefix(key, p.Prefix+"/")
}

// Inside refuses t unless every key it touches lies under one of the
// table's places.
func (t Target) Inside(places []Place) error {
	for _, k := range t.Keys {
		in := false
		for _, p := range places {
			if p.contains(t.Bucket, k) {
				in = true
				break
			}
		}
		if !in {
			return refuse("s3://%s/%s is outside the table's locations", t.Bucket, k)
		}
	}
	return nil
}
