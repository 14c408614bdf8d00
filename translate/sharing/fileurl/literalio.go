package fileurl

import (
	"context"
	"io"
	"io/fs"
	"strings"

	iceio "github.com/apache/iceberg-go/io"
)

// LiteralIO is inner with every file: location opened at the local path it
// spells (LocalPath), the file Iceberg's writers created: iceberg-go's own
// local file system percent-decodes file: URIs, so through it a data file
// in region=us%2Feast+1 would be looked for in region=us/east+1. Other
// locations (s3://, absolute paths, which iceberg-go takes as they are)
// reach inner unchanged.
func LiteralIO(inner iceio.IO) iceio.IO { return literalIO{inner} }

// LiteralIOFunc makes every file system fsF opens a LiteralIO.
func LiteralIOFunc(fsF func(context.Context) (iceio.IO, error)) func(context.Context) (iceio.IO, error) {
	return func(ctx context.Context) (iceio.IO, error) {
		inner, err := fsF(ctx)
		if err != nil {
			return nil, err
		}
		return LiteralIO(inner), nil
	}
}

type literalIO struct{ inner iceio.IO }

var (
	_ iceio.ReadFileIO  = literalIO{}
	_ iceio.WriteFileIO = literalIO{}
)

// name is what inner is given for name: the plain path of a file: URI.
func (l literalIO) name(op, name string) (string, error) {
	if len(name) < 5 || !strings.EqualFold(name[:5], "file:") {
		return name, nil
	}
	p, err := LocalPath(name)
	if err != nil {
		return "", &fs.PathError{Op: op, Path: name, Err: err}
	}
	return p, nil
}

func (l literalIO) Open(name string) (iceio.File, error) {
	p, err := l.name("open", name)
	if err != nil {
		return nil, err
	}
	return l.inner.Open(p)
}

func (l literalIO) Remove(name string) error {
	p, err := l.name("remove", name)
	if err != nil {
		return err
	}
	return l.inner.Remove(p)
}

func (l literalIO) ReadFile(name string) ([]byte, error) {
	p, err := l.name("read", name)
	if err != nil {
		return nil, err
	}
	if r, ok := l.inner.(iceio.ReadFileIO); ok {
		return r.ReadFile(p)
	}
	f, err := l.inner.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func (l literalIO) Create(name string) (iceio.FileWriter, error) {
	w, p, err := l.writer("create", name)
	if err != nil {
		return nil, err
	}
	return w.Create(p)
}

func (l literalIO) WriteFile(name string, data []byte) error {
	w, p, err := l.writer("write", name)
	if err != nil {
		return err
	}
	return w.WriteFile(p, data)
}

func (l literalIO) writer(op, name string) (iceio.WriteFileIO, string, error) {
	w, ok := l.inner.(iceio.WriteFileIO)
	if !ok {
		return nil, "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	p, err := l.name(op, name)
	return w, p, err
}
