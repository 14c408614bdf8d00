package policies

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"
)

// startReloader polls the directory when reloading is enabled. Polling
// (not fsnotify) keeps working on network and container-mounted volumes,
// where ConfigMap updates swap symlinks that inotify watchers miss.
func (e *Engine) startReloader(last snapshot) {
	ctx, cancel := context.WithCancel(context.Background())
	e.stop = cancel
	if e.cfg.ReloadInterval < 0 {
		close(e.done)
		return
	}
	go e.poll(ctx, last)
}

func (e *Engine) poll(ctx context.Context, last snapshot) {
	defer close(e.done)
	t := time.NewTicker(e.cfg.ReloadInterval.D())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// A failed load is remembered too, so a broken file is reported
		// once, not every tick; fixing it changes the snapshot.
		if now := takeSnapshot(e.cfg.Dir); !now.same(last) {
			last = now
			_ = e.reload(ctx)
		}
	}
}

// reload loads the directory and swaps the new set in. On failure the
// previous set keeps deciding: a typo must not open or close the gateway.
func (e *Engine) reload(ctx context.Context) error {
	e.reloadMu.Lock()
	defer e.reloadMu.Unlock()
	set, err := e.loadChecked(ctx)
	if err != nil && ctx.Err() != nil {
		return err // Close interrupted the load; nothing is wrong with the files
	}
	if err != nil {
		e.log.Error("policy reload failed; keeping the previous policy",
			zap.String("dir", e.cfg.Dir), zap.String("package", e.cfg.Package), zap.Error(err))
		return err
	}
	e.set.Store(set)
	e.logLoaded("policies reloaded", set)
	return nil
}

// snapshot is what the poller compares: the policy files' names, sizes,
// mtimes and identities. It does not read contents, so polling stays
// cheap. File identity (os.SameFile: inode on Unix) catches atomic
// replacements (editors, ConfigMap swaps) even when size and mtime match,
// as they can within one tick of the filesystem clock; only a same-size
// in-place rewrite within that tick goes unseen until the next change.
type snapshot struct {
	err   string
	files []os.FileInfo // by name
}

func takeSnapshot(dir string) snapshot {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return snapshot{err: err.Error()} // a vanished dir is a change, reported once
	}
	var s snapshot
	for _, ent := range entries { // ReadDir sorts by name
		if !isPolicyFile(ent.Name()) || ent.IsDir() {
			continue
		}
		// Stat, not ent.Info (lstat): Kubernetes ConfigMap files are
		// symlinks whose targets change while the links stay the same.
		info, err := os.Stat(filepath.Join(dir, ent.Name()))
		if err != nil {
			continue // removed between ReadDir and Stat; the next poll sees it
		}
		s.files = append(s.files, info)
	}
	return s
}

func (s snapshot) same(o snapshot) bool {
	if s.err != o.err || len(s.files) != len(o.files) {
		return false
	}
	for i, f := range s.files {
		g := o.files[i]
		if f.Name() != g.Name() || f.Size() != g.Size() || !f.ModTime().Equal(g.ModTime()) || !os.SameFile(f, g) {
			return false
		}
	}
	return true
}
