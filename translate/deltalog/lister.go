package deltalog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	iceio "github.com/apache/iceberg-go/io"
)

// FileInfo is one file of a listing: its base name, size and modification
// time (the commit timestamp of a commit file when In-Commit Timestamps
// are off, "In-Commit Timestamps").
type FileInfo struct {
	Name    string
	Size    int64
	ModTime time.Time
}

// Lister lists the files directly inside a directory (an object-store
// prefix): dir is a URI or local path as the table's io.IO takes it,
// without a trailing slash. Subdirectories (_staged_commits, _sidecars) are
// not listed. A directory that does not exist is an error that satisfies
// errors.Is(err, fs.ErrNotExist), or an empty listing.
type Lister interface {
	List(ctx context.Context, dir string) ([]FileInfo, error)
}

// errTooMany stops a listing at its limit.
var errTooMany = errors.New("too many files")

// IOLister lists through iceberg-go's ListableIO, which LocalFS and the
// gocloud blob IOs (s3, gs, azure) implement, as does lakegate's
// locations-confined IO. WalkDir walks a tree; IOLister skips every
// subdirectory, so on object stores it costs one delimited listing of the
// prefix. Max stops the walk early (0: no limit).
type IOLister struct {
	IO  iceio.ListableIO
	Max int
}

func (l IOLister) List(ctx context.Context, dir string) ([]FileInfo, error) {
	var out []FileInfo
	root := true
	err := l.IO.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if root { // WalkDir's first call is dir itself
			root = false
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			return fs.SkipDir
		}
		fi, err := entryInfo(d)
		if err != nil {
			return err
		}
		if out = append(out, fi); l.Max > 0 && len(out) > l.Max {
			return errTooMany
		}
		return nil
	})
	return out, err
}

func entryInfo(d fs.DirEntry) (FileInfo, error) {
	info, err := d.Info()
	if err != nil {
		return FileInfo{}, err
	}
	return FileInfo{Name: d.Name(), Size: info.Size(), ModTime: info.ModTime()}, nil
}

// LocalLister lists a local directory (a path or a file:// URI), for
// callers that hold no io.IO.
type LocalLister struct{}

func (LocalLister) List(ctx context.Context, dir string) ([]FileInfo, error) {
	entries, err := iceio.LocalFS{}.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]FileInfo, 0, len(entries))
	for _, d := range entries {
		if d.IsDir() {
			continue
		}
		fi, err := entryInfo(d)
		if err != nil {
			return nil, err
		}
		out = append(out, fi)
	}
	return out, ctx.Err()
}

// listerFor picks the Lister of an IO that can list itself.
func listerFor(fsys iceio.IO, max int) (Lister, error) {
	if l, ok := fsys.(iceio.ListableIO); ok {
		return IOLister{IO: l, Max: max}, nil
	}
	return nil, fmt.Errorf("%w: the table's IO (%T) cannot list directories; pass a Lister", ErrUnsupported, fsys)
}

// join appends a relative name to a location.
func join(root string, rel ...string) string {
	return strings.TrimSuffix(root, "/") + "/" + strings.Join(rel, "/")
}
