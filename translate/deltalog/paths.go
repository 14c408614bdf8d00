package deltalog

import (
	"fmt"
	"net/url"
	"strings"
)

// ResolvePath turns a file action's path into the file's location: "The
// path is a URI as specified by RFC 2396 ... which needs to be decoded to
// get the data file path" ("Add File and Remove File"). A relative path is
// under the table root (root, as the table's io.IO takes it); an absolute
// one (a shallow clone's files, say) stays where it is, decoded. So
// "a%20b=x%3Ay/part-0.parquet" is root + "/a b=x:y/part-0.parquet".
//
// A relative path may not climb out of the root with "..": data files live
// "in the root directory of the table or in any non-hidden subdirectory"
// ("Data Files"). Whether an absolute location is acceptable is the
// caller's decision (lakegate confines reads to the catalog's locations).
func ResolvePath(root, p string) (string, error) {
	u, err := url.Parse(p)
	if err != nil || p == "" || u.Opaque != "" {
		return "", fmt.Errorf("path %q is not a URI", p)
	}
	if strings.ContainsAny(p, "?#") {
		// A '?' or '#' in a file name is written %3F / %23; unescaped they
		// would silently cut the name short.
		return "", fmt.Errorf("path %q has a query or fragment", p)
	}
	if u.IsAbs() {
		return absolute(root, u), nil
	}
	if strings.HasPrefix(u.Path, "/") {
		return u.Path, nil // an absolute local path
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == ".." {
			return "", fmt.Errorf("path %q climbs out of the table root", p)
		}
	}
	return strings.TrimSuffix(root, "/") + "/" + u.Path, nil
}

// absolute spells an absolute URI the way root is spelled, so that one
// file is one key in reconciliation: a local table's root is often a plain
// path while its log says file:///… (or Hadoop's file:/…).
func absolute(root string, u *url.URL) string {
	if u.Scheme == "file" && (u.Host == "" || u.Host == "localhost") {
		if !strings.Contains(root, "://") {
			return u.Path
		}
		return "file://" + u.Path
	}
	return u.Scheme + "://" + u.Host + u.Path
}
