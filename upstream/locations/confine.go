package locations

import (
	"context"
	"errors"
	"io"
	"io/fs"

	icebergio "github.com/apache/iceberg-go/io"
)

// Confine wraps a file system so that every name outside the rule's roots
// is refused with a *fs.PathError wrapping ErrOutside, before the inner
// file system sees it. Metadata names the files a reader or a purge
// follows (manifest lists, manifests, data files); a confined file system
// is what keeps a crafted metadata file from reaching /etc or another
// tenant's bucket.
func Confine(inner icebergio.IO, rule *Rule) icebergio.IO {
	return &confined{inner: inner, rule: rule}
}

// ConfineFunc confines every file system fsF opens.
func ConfineFunc(fsF func(context.Context) (icebergio.IO, error), rule *Rule) func(context.Context) (icebergio.IO, error) {
	return func(ctx context.Context) (icebergio.IO, error) {
		inner, err := fsF(ctx)
		if err != nil {
			return nil, err
		}
		return Confine(inner, rule), nil
	}
}

type confined struct {
	inner icebergio.IO
	rule  *Rule
}

var (
	_ icebergio.ReadFileIO      = (*confined)(nil)
	_ icebergio.WriteFileIO     = (*confined)(nil)
	_ icebergio.ListableIO      = (*confined)(nil)
	_ icebergio.BulkRemovableIO = (*confined)(nil)
)

var errUnsupported = errors.New("not supported by the underlying file system")

func (c *confined) check(op, name string) error {
	if c.rule.Allows(name) {
		return nil
	}
	return &fs.PathError{Op: op, Path: name, Err: ErrOutside}
}

func (c *confined) Open(name string) (icebergio.File, error) {
	if err := c.check("open", name); err != nil {
		return nil, err
	}
	return c.inner.Open(name)
}

func (c *confined) Remove(name string) error {
	if err := c.check("remove", name); err != nil {
		return err
	}
	return c.inner.Remove(name)
}

func (c *confined) ReadFile(name string) ([]byte, error) {
	if err := c.check("read", name); err != nil {
		return nil, err
	}
	if r, ok := c.inner.(icebergio.ReadFileIO); ok {
		return r.ReadFile(name)
	}
	f, err := c.inner.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func (c *confined) Create(name string) (icebergio.FileWriter, error) {
	if err := c.check("create", name); err != nil {
		return nil, err
	}
	w, ok := c.inner.(icebergio.WriteFileIO)
	if !ok {
		return nil, &fs.PathError{Op: "create", Path: name, Err: errUnsupported}
	}
	return w.Create(name)
}

func (c *confined) WriteFile(name string, p []byte) error {
	if err := c.check("write", name); err != nil {
		return err
	}
	w, ok := c.inner.(icebergio.WriteFileIO)
	if !ok {
		return &fs.PathError{Op: "write", Path: name, Err: errUnsupported}
	}
	return w.WriteFile(name, p)
}

// WalkDir walks only a root inside the rule; what it finds below is inside
// too, lexically (see the package comment on links).
func (c *confined) WalkDir(root string, fn fs.WalkDirFunc) error {
	if err := c.check("walk", root); err != nil {
		return err
	}
	l, ok := c.inner.(icebergio.ListableIO)
	if !ok {
		return &fs.PathError{Op: "walk", Path: root, Err: errUnsupported}
	}
	return l.WalkDir(root, fn)
}

// DeleteFiles deletes the allowed names and reports the others as
// failures; none of them reaches the inner file system.
func (c *confined) DeleteFiles(ctx context.Context, paths []string) ([]string, error) {
	var inside []string
	var errs []error
	for _, p := range paths {
		if err := c.check("remove", p); err != nil {
			errs = append(errs, err)
			continue
		}
		inside = append(inside, p)
	}
	var deleted []string
	if b, ok := c.inner.(icebergio.BulkRemovableIO); ok {
		d, err := b.DeleteFiles(ctx, inside)
		deleted, errs = d, append(errs, err)
	} else {
		for _, p := range inside {
			if err := c.inner.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
				continue
			}
			deleted = append(deleted, p)
		}
	}
	return deleted, errors.Join(errs...)
}
