package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lakegate/lakegate/cache"
)

// serveFromMemory GETs from once and then answers every GET (and HEAD)
// on addr with exactly that body, Content-Type and ETag: the most a
// server can do for a LoadTable answer it already holds, the baseline of
// lakegate's L1 hits. With inflate > 0 the answer is first grown to at
// least inflate bytes (see inflateAnswer) and served without an ETag.
// GET /v1/config answers an empty catalog config, so a gateway can use
// the server as its remote catalog.
func serveFromMemory(addr, from string, inflate int, timeout time.Duration) error {
	if from == "" {
		return errors.New("-serve needs -from URL")
	}
	if err := loopbackOnly(from); err != nil {
		return err
	}
	if err := loopbackOnly("http://" + addr); err != nil {
		return err
	}
	resp, body, err := fetchLoadTable(from, timeout)
	if err != nil {
		return err
	}
	keep := []string{"Content-Type", "ETag"}
	if inflate > 0 {
		if body, err = inflateAnswer(body, inflate); err != nil {
			return err
		}
		keep = keep[:1] // another body: the backend's tag is not its tag
	}
	hdr := http.Header{}
	for _, k := range keep {
		if v := resp.Header.Values(k); len(v) > 0 {
			hdr[k] = v
		}
	}
	hdr["Content-Length"] = []string{strconv.Itoa(len(body))}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "loadgen: serving %d bytes (%s) from memory on %s\n", len(body), from, ln.Addr())
	srv := &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				w.Header().Set("Allow", "GET, HEAD")
				http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
				return
			}
			h := w.Header()
			if r.URL.Path == "/v1/config" {
				h.Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"defaults":{},"overrides":{}}`)
				return
			}
			for k, v := range hdr {
				h[k] = v
			}
			w.WriteHeader(http.StatusOK)
			if r.Method == http.MethodGet {
				_, _ = w.Write(body)
			}
		}),
	}
	return srv.Serve(ln)
}

// probeTable GETs target once and prints, curl-style, the status, the
// response headers and the body's size; it fails unless the answer is a
// LoadTable 200.
func probeTable(w io.Writer, target string, timeout time.Duration) error {
	resp, body, err := fetchLoadTable(target, timeout)
	if resp != nil {
		fmt.Fprintf(w, "Status: %d\n", resp.StatusCode)
		keys := make([]string, 0, len(resp.Header))
		for k := range resp.Header {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			for _, v := range resp.Header[k] {
				fmt.Fprintf(w, "%s: %s\n", k, v)
			}
		}
		fmt.Fprintf(w, "Body-Bytes: %d\n", len(body))
	}
	return err
}

// pingRedis PINGs the Redis at raw (loopback only), prints its process
// id when it tells it and, with forget,
// drops table ns.name of catalog from lakegate's L2 cache there, as a
// write through lakegate would: an entry left by an earlier run (of an
// earlier backend) would otherwise answer this run's first loads.
func pingRedis(raw string, forget bool, catalog, ns, name string) error {
	opts, err := redis.ParseURL(raw)
	if err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	host, _, err := net.SplitHostPort(opts.Addr)
	if err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	if !loopbackHost(host) {
		return fmt.Errorf("redis %s: only loopback addresses are allowed", opts.Addr)
	}
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout, opts.MaxRetries = time.Second, time.Second, time.Second, 0
	redis.SetLogger(quiet{}) // the error returned says it once
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis %s: %w", opts.Addr, err)
	}
	// Redis's process id, for run.sh to count its CPU too when it runs
	// on this machine (INFO may be refused: then nothing is printed).
	if info, err := rdb.Info(ctx, "server").Result(); err == nil {
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
				fmt.Println(v)
			}
		}
	}
	if !forget {
		return nil
	}
	c, err := cache.New(cache.Config{}, rdb, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	c.Invalidate(ctx, cache.TableKey(catalog, []string{ns}, name))
	// Invalidate reports no error: a Redis that failed it shows here.
	return rdb.Ping(ctx).Err()
}

// quiet drops go-redis's own log lines.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// inflateAnswer grows a LoadTable answer to at least size bytes the way a
// long-lived table grows: its metadata's snapshots (and snapshot log) are
// repeated with new snapshot ids. The result is still a valid answer.
func inflateAnswer(body []byte, size int) ([]byte, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, fmt.Errorf("inflate: %w", err)
	}
	var meta map[string]json.RawMessage
	var snaps []map[string]any
	if err := json.Unmarshal(top["metadata"], &meta); err != nil {
		return nil, fmt.Errorf("inflate: metadata: %w", err)
	}
	if err := json.Unmarshal(meta["snapshots"], &snaps); err != nil || len(snaps) == 0 {
		return nil, errors.New("inflate: the table has no snapshots to repeat")
	}
	// The bytes one snapshot takes as re-encoded below.
	enc, err := json.Marshal(snaps)
	if err != nil {
		return nil, err
	}
	per := len(enc)/len(snaps) + 1
	grown := make([]map[string]any, 0, size/per+len(snaps))
	grown = append(grown, snaps...)
	for id := int64(1 << 40); len(grown)*per < size; id++ {
		s := make(map[string]any, len(snaps[0]))
		for k, v := range snaps[len(grown)%len(snaps)] {
			s[k] = v
		}
		s["snapshot-id"] = id
		grown = append(grown, s)
	}
	if meta["snapshots"], err = json.Marshal(grown); err != nil {
		return nil, err
	}
	if top["metadata"], err = json.Marshal(meta); err != nil {
		return nil, err
	}
	return json.Marshal(top)
}
