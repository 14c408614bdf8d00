// Package locations confines a catalog to its warehouse: a Rule says
// whether a location (a table's, a metadata file's, a data file's) lies
// under one of the catalog's allowed roots, and Confine wraps a file system
// so nothing outside them is read, written or deleted.
//
// The check is lexical: a location is compared after parsing, never after
// resolving it on a file system, so symbolic links inside a warehouse are
// the operator's to control. Anything the parser cannot reduce to one
// unambiguous place (relative paths, `.`/`..` segments, queries, control
// characters) is outside.
package locations

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"unicode/utf8"
)

// ErrOutside is a location outside every allowed root. It is an
// fs.ErrPermission, so file-system callers treat it as a refusal.
var ErrOutside = fmt.Errorf("location is outside the catalog's allowed locations: %w", fs.ErrPermission)

// Rule is a set of allowed roots. The zero Rule (and a nil *Rule) allows
// nothing: confinement is opt-out by construction, never by accident.
type Rule struct {
	roots []place
}

// New builds a rule from roots: absolute paths or URLs (file:///data,
// s3://bucket/prefix). A root that is not one unambiguous place is an
// error, so a typo in the config fails at start instead of allowing more.
func New(roots ...string) (*Rule, error) {
	r := &Rule{}
	for _, root := range roots {
		p, err := parse(root)
		if err != nil {
			return nil, fmt.Errorf("allowed location %q: %w", root, err)
		}
		p.path, p.raw = strings.TrimSuffix(p.path, "/"), strings.TrimSuffix(p.raw, "/")
		r.roots = append(r.roots, p)
	}
	return r, nil
}

// Union is the rule that allows what any of rules allows (nil ones allow
// nothing).
func Union(rules ...*Rule) *Rule {
	u := &Rule{}
	for _, r := range rules {
		if r != nil {
			u.roots = append(u.roots, r.roots...)
		}
	}
	return u
}

// Allows reports whether loc is one of the roots or lies below one.
func (r *Rule) Allows(loc string) bool { return r.Check(loc) == nil }

// Meets reports whether loc is one of the roots, lies below one, or holds
// one: what lies at loc and what the rule allows may share files.
func (r *Rule) Meets(loc string) bool {
	p, err := parse(loc)
	if err != nil || r == nil {
		return false
	}
	p.path, p.raw = strings.TrimSuffix(p.path, "/"), strings.TrimSuffix(p.raw, "/")
	for _, root := range r.roots {
		if root.contains(p) || p.contains(root) {
			return true
		}
	}
	return false
}

// Check is Allows as an error: nil, or one wrapping ErrOutside that
// names only what the caller passed in.
func (r *Rule) Check(loc string) error {
	p, err := parse(loc)
	if err == nil && r != nil {
		for _, root := range r.roots {
			if root.contains(p) {
				return nil
			}
		}
	}
	return fmt.Errorf("%q: %w", loc, ErrOutside)
}

// place is a location reduced to what confinement compares: scheme,
// authority (bucket, container@account) and path, both as written and
// percent-decoded (file systems decode file: URIs, object stores do not).
type place struct {
	scheme, host string
	path, raw    string
}

func (root place) contains(p place) bool {
	return root.scheme == p.scheme && root.host == p.host &&
		under(root.path, p.path) && under(root.raw, p.raw)
}

func under(root, p string) bool {
	return p == root || strings.HasPrefix(p, root+"/")
}

// schemeAliases are schemes that open the same store.
var schemeAliases = map[string]string{"s3a": "s3", "s3n": "s3", "abfss": "abfs", "wasbs": "wasb",
	"local": "file"} // Trino's native local file system

func parse(loc string) (place, error) {
	if err := plainText(loc); err != nil {
		return place{}, err
	}
	if strings.HasPrefix(loc, "/") {
		loc = "file://" + loc
	}
	u, err := url.Parse(loc)
	switch {
	case err != nil:
		return place{}, errors.New("not a location")
	case u.Scheme == "":
		return place{}, errors.New("a relative location")
	case u.Opaque != "":
		return place{}, errors.New("a relative location")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(loc, "#"):
		return place{}, errors.New("a location with a query or fragment")
	}
	p := place{scheme: strings.ToLower(u.Scheme), path: u.Path, raw: u.EscapedPath()}
	if alias, ok := schemeAliases[p.scheme]; ok {
		p.scheme = alias
	}
	p.host = strings.ToLower(u.Host)
	if u.User != nil {
		p.host = u.User.String() + "@" + p.host
	}
	if p.scheme == "file" {
		if p.host != "" && p.host != "localhost" {
			return place{}, errors.New("a file location on another host")
		}
		p.host = ""
	} else if p.host == "" {
		return place{}, errors.New("a location without a bucket or host")
	}
	if !strings.HasPrefix(p.path, "/") && p.path != "" {
		return place{}, errors.New("a relative location")
	}
	if err := plainText(p.path); err != nil {
		return place{}, err
	}
	if dotSegment(p.path) || dotSegment(p.raw) {
		return place{}, errors.New("a location with . or .. segments")
	}
	return p, nil
}

// plainText refuses what no catalog location needs and some file systems
// misread: invalid UTF-8 and control characters (NUL included).
func plainText(s string) error {
	if s == "" {
		return errors.New("an empty location")
	}
	if !utf8.ValidString(s) {
		return errors.New("invalid UTF-8")
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return errors.New("a control character")
		}
	}
	return nil
}

func dotSegment(path string) bool {
	for seg := range strings.SplitSeq(path, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// Valid reports why loc is not one unambiguous absolute location (the
// syntax Check requires of everything it allows), or nil.
func Valid(loc string) error {
	_, err := parse(loc)
	return err
}

// Overlap reports whether a and b are the same place or one lies below the
// other: two tables there would read each other's files. Locations that do
// not parse overlap nothing (Valid refuses them first).
func Overlap(a, b string) bool {
	pa, erra := parse(a)
	pb, errb := parse(b)
	if erra != nil || errb != nil {
		return false
	}
	pa.path, pa.raw = strings.TrimSuffix(pa.path, "/"), strings.TrimSuffix(pa.raw, "/")
	pb.path, pb.raw = strings.TrimSuffix(pb.path, "/"), strings.TrimSuffix(pb.raw, "/")
	return pa.contains(pb) || pb.contains(pa)
}
