// Command loadgen drives LoadTable load at an Iceberg REST catalog on
// loopback, for examples/bench/run.sh and interop/bench/run.sh. Its modes:
//
//	loadgen -wait -url http://127.0.0.1:18181
//	    poll GET /v1/config until it answers 200 (at most -timeout)
//	loadgen -setup -url http://127.0.0.1:18181 -prefix local -snapshots 32
//	    create namespace -namespace and table -table through iceberg-go's
//	    REST client and append small Arrow batches until the table holds
//	    -snapshots snapshots
//	loadgen -url http://127.0.0.1:18182 -prefix remote -concurrency 16 -duration 10s
//	    closed-loop GET /v1/{prefix}/namespaces/{ns}/tables/{table} from
//	    -concurrency workers for -duration (after -warmup), at most
//	    -max-requests in all; prints one JSON object:
//	    {requests, seconds, rps, p50_us, p99_us, errors, bytes, cache,
//	    unexpected}. The first GET must be a LoadTable answer (a 200 whose
//	    body has a metadata-location), so a proxy that reaches the wrong
//	    site fails fast instead of measuring empty 200s. cache counts the
//	    successful answers by their Lakegate-Cache header ("none": absent);
//	    with -expect-cache V, unexpected counts those not V
//	loadgen -probe -url http://127.0.0.1:18182 -prefix remote
//	    one GET of the table; prints the status, the response headers and
//	    Body-Bytes curl-style, and fails unless it is 200
//	loadgen -serve 127.0.0.1:18103 -from http://127.0.0.1:18181/v1/local/namespaces/bench/tables/events
//	    GET -from once (it must be a LoadTable answer), then answer every
//	    GET on -serve with exactly that body and its Content-Type and ETag,
//	    from memory, with plain net/http, until killed; GET /v1/config
//	    answers an empty config (a gateway may use it as its catalog);
//	    -inflate N first grows the answer to N bytes with repeated
//	    snapshots (and then serves no ETag)
//	loadgen -redis redis://127.0.0.1:6379/0 [-forget-table -prefix remote]
//	    PING Redis (fails unless it answers); with -forget-table, also drop
//	    the table's entries (-prefix is the catalog name) from lakegate's
//	    L2 cache there, through lakegate's own cache package
//	loadgen -summarize DIR
//	    read DIR/direct-*.json and DIR/gateway-*.json (outputs of the load
//	    mode) and print a markdown comparison (interop/bench/run.sh)
//	loadgen -report DIR
//	    read the rounds examples/bench/run.sh wrote to DIR (runs.tsv,
//	    RUN-N.json, cpu-RUN-N.txt, skipped.tsv) and print the target table
//	    and the per-round details (see report.go)
//
// It only talks to loopback addresses (Redis included).
package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // -setup appends to S3 warehouses too (Nessie's)
	"github.com/apache/iceberg-go/table"
)

func main() {
	var (
		setup       = flag.Bool("setup", false, "create the namespace and table with -snapshots snapshots, then exit")
		wait        = flag.Bool("wait", false, "wait until -url answers GET /v1/config with 200, then exit")
		probe       = flag.Bool("probe", false, "GET the table once and print the status and headers, then exit")
		serveAddr   = flag.String("serve", "", "serve the answer of -from from memory on this loopback address")
		from        = flag.String("from", "", "for -serve: the URL whose answer is served")
		inflate     = flag.Int("inflate", 0, "for -serve: grow the answer to at least this many bytes (repeated snapshots)")
		redisURL    = flag.String("redis", "", "PING this Redis (loopback only), then exit")
		forget      = flag.Bool("forget-table", false, "with -redis: drop the table from lakegate's L2 cache (catalog -prefix)")
		summarize   = flag.String("summarize", "", "print a markdown comparison of DIR/direct-*.json and DIR/gateway-*.json")
		report      = flag.String("report", "", "print the target table of the rounds examples/bench/run.sh wrote to DIR")
		base        = flag.String("url", "http://127.0.0.1:18181", "catalog base URL (loopback only), without /v1")
		prefix      = flag.String("prefix", "local", "catalog prefix (the warehouse name; raw path text, may be empty)")
		warehouse   = flag.String("warehouse", "", "warehouse for -setup (default: -prefix)")
		namespace   = flag.String("namespace", "bench", "namespace of the table")
		tableName   = flag.String("table", "events", "table name")
		snapshots   = flag.Int("snapshots", 32, "snapshots the table holds after -setup")
		concurrency = flag.Int("concurrency", 16, "closed-loop workers")
		duration    = flag.Duration("duration", 10*time.Second, "measured load duration")
		warmup      = flag.Duration("warmup", time.Second, "unmeasured load before -duration")
		maxRequests = flag.Int64("max-requests", 5_000_000, "upper bound on measured requests")
		timeout     = flag.Duration("timeout", 30*time.Second, "per-request timeout; also the -wait deadline")
		op          = flag.String("op", "load", "load: GET LoadTable of -table; commit: each worker commits a property change to its own table -table_<worker> (-setup -op commit creates them)")
		expectCache = flag.String("expect-cache", "", "count successful loads whose Lakegate-Cache header is not this (none: no header) as unexpected")
	)
	flag.Parse()

	switch {
	case *summarize != "":
		if err := summary(os.Stdout, *summarize); err != nil {
			fatal(err)
		}
		return
	case *report != "":
		if err := writeReport(os.Stdout, *report); err != nil {
			fatal(err)
		}
		return
	case *redisURL != "":
		if err := pingRedis(*redisURL, *forget, *prefix, *namespace, *tableName); err != nil {
			fatal(err)
		}
		return
	case *serveAddr != "":
		if err := serveFromMemory(*serveAddr, *from, *inflate, *timeout); err != nil {
			fatal(err)
		}
		return
	}
	if err := loopbackOnly(*base); err != nil {
		fatal(err)
	}
	target := strings.TrimRight(*base, "/") + "/v1/" + prefixPath(*prefix) +
		"namespaces/" + url.PathEscape(*namespace) + "/tables/" + url.PathEscape(*tableName)
	switch {
	case *wait:
		if err := waitReady(*base, *timeout); err != nil {
			fatal(err)
		}
	case *probe:
		if err := probeTable(os.Stdout, target, *timeout); err != nil {
			fatal(err)
		}
	case *setup && *op == "commit":
		if err := setupCommitTables(context.Background(), *base, cmp.Or(*warehouse, *prefix), *namespace, *tableName, *concurrency); err != nil {
			fatal(err)
		}
	case *setup:
		if *snapshots < 1 {
			fatal(errors.New("-snapshots must be at least 1"))
		}
		n, err := setupTable(context.Background(), *base, cmp.Or(*warehouse, *prefix), *namespace, *tableName, *snapshots)
		if err != nil {
			fatal(err)
		}
		fmt.Fprintf(os.Stderr, "loadgen: %s.%s has %d snapshots\n", *namespace, *tableName, n)
	default:
		if *concurrency < 1 || *duration <= 0 || *maxRequests < 1 {
			fatal(errors.New("-concurrency, -duration and -max-requests must be positive"))
		}
		send, err := sender(*op, target)
		if err != nil {
			fatal(err)
		}
		if *op == "load" {
			// fail fast when the table is not there, or the answer is not one
			if _, _, err := fetchLoadTable(target, *timeout); err != nil {
				fatal(err)
			}
		}
		res, err := load(send, *concurrency, *warmup, *duration, *maxRequests, *timeout, *expectCache)
		if err != nil {
			fatal(err)
		}
		out, _ := json.Marshal(res)
		fmt.Println(string(out))
		if res.Unexpected > 0 {
			fmt.Fprintf(os.Stderr, "loadgen: %d of %d loads were not answered %s=%s: %v\n",
				res.Unexpected, res.Requests-res.Errors, cacheHeader, *expectCache, res.Cache)
		}
	}
}

// prefixPath is the path segment of a catalog prefix ("" for a backend
// that uses none, such as Iceberg's reference server). A prefix is raw
// path text (Nessie's main%7Cwarehouse), inserted as is.
func prefixPath(prefix string) string {
	if prefix == "" {
		return ""
	}
	return prefix + "/"
}

// catalogOptions connects to a catalog by its warehouse name, or to the
// backend's only catalog when there is none.
func catalogOptions(warehouse string) []rest.Option {
	if warehouse == "" {
		return nil
	}
	return []rest.Option{rest.WithWarehouseLocation(warehouse)}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "loadgen:", err)
	os.Exit(1)
}

// loopbackOnly refuses any URL whose host is not a loopback address.
func loopbackOnly(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if loopbackHost(u.Hostname()) {
		return nil
	}
	return fmt.Errorf("%s: only loopback addresses are allowed", raw)
}

func loopbackHost(host string) bool {
	ip := net.ParseIP(host)
	return (ip != nil && ip.IsLoopback()) || host == "localhost"
}

func waitReady(base string, limit time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(limit)
	for {
		resp, err := client.Get(strings.TrimRight(base, "/") + "/v1/config")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("GET /v1/config: %s", resp.Status)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s: %v", base, limit, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var eventSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "msg", Type: iceberg.PrimitiveTypes.String},
)

// setupTable creates the namespace and table when missing and appends
// 10-row batches until the table holds want snapshots; it returns how
// many it holds.
func setupTable(ctx context.Context, base, prefix, ns, name string, want int) (int, error) {
	cat, err := rest.NewCatalog(ctx, "loadgen", base, catalogOptions(prefix)...)
	if err != nil {
		return 0, err
	}
	defer cat.Close()
	nsID, id := table.Identifier{ns}, table.Identifier{ns, name}
	if err := cat.CreateNamespace(ctx, nsID, nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		return 0, fmt.Errorf("create namespace: %w", err)
	}
	tbl, err := cat.LoadTable(ctx, id)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		tbl, err = cat.CreateTable(ctx, id, eventSchema)
	}
	if err != nil {
		return 0, fmt.Errorf("table: %w", err)
	}
	for i := int64(len(tbl.Metadata().Snapshots())); i < int64(want); i++ {
		data, err := batch(tbl, i*10, i*10+10)
		if err != nil {
			return 0, err
		}
		tbl, err = tbl.AppendTable(ctx, data, 16, nil)
		data.Release()
		if err != nil {
			return 0, fmt.Errorf("append %d: %w", i+1, err)
		}
	}
	return len(tbl.Metadata().Snapshots()), nil
}

// batch is an Arrow table of rows with ids [from, to) in tbl's schema.
func batch(tbl *table.Table, from, to int64) (arrow.Table, error) {
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	if err != nil {
		return nil, err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := from; i < to; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("event %d", i))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return array.NewTableFromRecords(sc, []arrow.RecordBatch{rec}), nil
}

// Result is one load run.
type Result struct {
	Requests int64   `json:"requests"` // measured requests that completed (including errors)
	Seconds  float64 `json:"seconds"`  // measured wall time
	RPS      float64 `json:"rps"`      // successful requests per second
	P50us    int64   `json:"p50_us"`   // latency of successful requests
	P99us    int64   `json:"p99_us"`
	Errors   int64   `json:"errors"` // transport errors and non-200 answers
	// Bytes is the response body bytes of the successful requests.
	Bytes int64 `json:"bytes,omitempty"`
	// Cache counts the successful requests by Lakegate-Cache header
	// ("none": the answer had none).
	Cache map[string]int64 `json:"cache,omitempty"`
	// Unexpected counts the successful requests whose Lakegate-Cache
	// header was not -expect-cache (0 without it).
	Unexpected int64 `json:"unexpected,omitempty"`
}

// cacheHeader is lakegate's upstream.CacheHeader: how a LoadTable was
// answered (hit-l1, hit-l2, revalidated, miss, stale).
const cacheHeader = "Lakegate-Cache"

// reply is what a successful request answered.
type reply struct {
	cache string // Lakegate-Cache header, "none" when absent
	bytes int64  // body bytes
}

// load runs closed-loop GETs of target: each worker sends its next
// request when the previous one finished. Requests cut off by the end
// of the measured window are not counted.
func load(send sendFunc, workers int, warmup, dur time.Duration, maxReq int64, timeout time.Duration, expectCache string) (Result, error) {
	client := &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			MaxIdleConns:        workers * 2,
			MaxIdleConnsPerHost: workers * 2,
			IdleConnTimeout:     90 * time.Second,
		},
	}
	defer client.CloseIdleConnections()
	// fail fast when the table is not there
	if _, err := send(context.Background(), client, 0); err != nil {
		return Result{}, err
	}
	if warmup > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), warmup)
		run(ctx, client, send, workers, -1, nil)
		cancel()
	}

	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	st := stats{cache: map[string]int64{}}
	st.budget.Store(maxReq)
	start := time.Now()
	run(ctx, client, send, workers, maxReq, &st)
	elapsed := time.Since(start).Seconds()

	lat := st.latencies()
	ok := int64(len(lat))
	res := Result{
		Requests: ok + st.errors.Load(),
		Seconds:  elapsed,
		RPS:      float64(ok) / elapsed,
		P50us:    percentile(lat, 0.50),
		P99us:    percentile(lat, 0.99),
		Errors:   st.errors.Load(),
		Bytes:    st.bytes,
		Cache:    st.cache,
	}
	if expectCache != "" {
		for v, n := range st.cache {
			if v != expectCache {
				res.Unexpected += n
			}
		}
	}
	return res, nil
}

type stats struct {
	budget atomic.Int64 // requests left to send
	errors atomic.Int64
	mu     sync.Mutex
	lat    [][]time.Duration
	bytes  int64
	cache  map[string]int64
}

func (s *stats) latencies() []time.Duration {
	var all []time.Duration
	for _, l := range s.lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	return all
}

// run keeps workers busy until ctx ends (or the budget in st runs out);
// st == nil discards the measurements (warm-up).
func run(ctx context.Context, client *http.Client, send sendFunc, workers int, maxReq int64, st *stats) {
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var (
				mine   []time.Duration
				nbytes int64
				cache  = map[string]int64{}
			)
			if st != nil {
				mine = make([]time.Duration, 0, 4096)
			}
			for ctx.Err() == nil {
				if st != nil && st.budget.Add(-1) < 0 {
					break
				}
				t0 := time.Now()
				rep, err := send(ctx, client, w)
				d := time.Since(t0)
				if ctx.Err() != nil {
					break // cut off by the end of the window: not counted
				}
				if st == nil {
					continue
				}
				if err != nil {
					if st.errors.Add(1) <= 3 {
						fmt.Fprintln(os.Stderr, "loadgen:", err)
					}
					continue
				}
				mine = append(mine, d)
				nbytes += rep.bytes
				cache[rep.cache]++
			}
			if st != nil {
				st.mu.Lock()
				st.lat = append(st.lat, mine)
				st.bytes += nbytes
				for k, n := range cache {
					st.cache[k] += n
				}
				st.mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// sendFunc sends one request of worker w and wants a 200.
type sendFunc func(ctx context.Context, client *http.Client, w int) (reply, error)

// sender is the request of an -op: LoadTable of target, or a commit to the
// worker's own table (target_<w>) that sets one property, so workers never
// conflict and every commit writes a new metadata file.
func sender(op, target string) (sendFunc, error) {
	switch op {
	case "load":
		return func(ctx context.Context, c *http.Client, _ int) (reply, error) { return get(ctx, c, target) }, nil
	case "commit":
		var n atomic.Int64
		return func(ctx context.Context, c *http.Client, w int) (reply, error) {
			body := fmt.Sprintf(`{"requirements":[],"updates":[{"action":"set-properties","updates":{"loadgen.n":"%d"}}]}`, n.Add(1))
			return post(ctx, c, fmt.Sprintf("%s_%d", target, w), body)
		}, nil
	}
	return nil, fmt.Errorf("unknown -op %q (load or commit)", op)
}

// setupCommitTables creates the namespace and one empty table per worker
// for -op commit.
func setupCommitTables(ctx context.Context, base, prefix, ns, name string, workers int) error {
	cat, err := rest.NewCatalog(ctx, "loadgen", base, catalogOptions(prefix)...)
	if err != nil {
		return err
	}
	defer cat.Close()
	if err := cat.CreateNamespace(ctx, table.Identifier{ns}, nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		return fmt.Errorf("create namespace: %w", err)
	}
	for w := range workers {
		id := table.Identifier{ns, fmt.Sprintf("%s_%d", name, w)}
		if _, err := cat.CreateTable(ctx, id, eventSchema); err != nil && !errors.Is(err, catalog.ErrTableAlreadyExists) {
			return fmt.Errorf("create %v: %w", id, err)
		}
	}
	return nil
}

// post sends one commit body, reads the answer whole and wants a 200.
func post(ctx context.Context, client *http.Client, target, body string) (reply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	return wantOK(client, req)
}

// get sends one GET, reads the body whole and wants a 200.
func get(ctx context.Context, client *http.Client, target string) (reply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return reply{}, err
	}
	return wantOK(client, req)
}

func wantOK(client *http.Client, req *http.Request) (reply, error) {
	resp, err := client.Do(req)
	if err != nil {
		return reply{}, err
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return reply{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return reply{}, fmt.Errorf("%s %s: %s", req.Method, req.URL, resp.Status)
	}
	return reply{cache: cmp.Or(resp.Header.Get(cacheHeader), "none"), bytes: n}, nil
}

// fetchLoadTable GETs target once and wants a LoadTable answer: a 200
// whose JSON body has a metadata-location. It returns the response (its
// body read) and the body.
func fetchLoadTable(target string, timeout time.Duration) (*http.Response, []byte, error) {
	client := &http.Client{Timeout: timeout}
	resp, err := client.Get(target)
	if err != nil {
		return nil, nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return resp, body, fmt.Errorf("GET %s: %s: %.200s", target, resp.Status, bytes.TrimSpace(body))
	}
	var doc struct {
		MetadataLocation string `json:"metadata-location"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || doc.MetadataLocation == "" {
		return resp, body, fmt.Errorf("GET %s: a 200 of %d bytes that is no LoadTable answer "+
			"(no metadata-location; a proxy reaching the wrong site?)", target, len(body))
	}
	return resp, body, nil
}

// percentile is the nearest-rank percentile of sorted, in microseconds.
func percentile(sorted []time.Duration, p float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.5) - 1
	i = max(0, min(i, len(sorted)-1))
	return sorted[i].Microseconds()
}

// round is one measured run of one target, with the CPU time the
// backend and gateway processes used during it when run.sh recorded it.
type round struct {
	Result
	cpu                  bool
	backendUs, gatewayUs float64 // CPU µs per completed request
}

// readRounds reads DIR/KIND-N.json (and DIR/cpu-KIND-N.txt: "backend_ticks
// gateway_ticks ticks_per_second") in order of N.
func readRounds(dir, kind string) ([]round, error) {
	paths, err := filepath.Glob(filepath.Join(dir, kind+"-*.json"))
	if err != nil {
		return nil, err
	}
	num := func(p string) int {
		var n int
		_, _ = fmt.Sscanf(strings.TrimPrefix(filepath.Base(p), kind+"-"), "%d", &n)
		return n
	}
	sort.Slice(paths, func(i, j int) bool { return num(paths[i]) < num(paths[j]) })
	var out []round
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var r round
		if err := json.Unmarshal(b, &r.Result); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if c, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("cpu-%s-%d.txt", kind, num(p)))); err == nil && r.Requests > 0 {
			var bt, gt, hz float64
			if n, _ := fmt.Sscan(string(c), &bt, &gt, &hz); n == 3 && hz > 0 {
				r.cpu = true
				r.backendUs = bt / hz * 1e6 / float64(r.Requests)
				r.gatewayUs = gt / hz * 1e6 / float64(r.Requests)
			}
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no %s-*.json in %s", kind, dir)
	}
	return out, nil
}

// summary prints per-round results and medians for direct and gateway,
// and gateway against direct.
func summary(w io.Writer, dir string) error {
	direct, err := readRounds(dir, "direct")
	if err != nil {
		return err
	}
	gw, err := readRounds(dir, "gateway")
	if err != nil {
		return err
	}
	withCPU := true
	for _, r := range append(append([]round{}, direct...), gw...) {
		withCPU = withCPU && r.cpu
	}

	if withCPU {
		fmt.Fprintln(w, "| round | target | requests | errors | rps | p50 (µs) | p99 (µs) | backend CPU µs/req | gateway CPU µs/req |")
		fmt.Fprintln(w, "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	} else {
		fmt.Fprintln(w, "| round | target | requests | errors | rps | p50 (µs) | p99 (µs) |")
		fmt.Fprintln(w, "| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
	}
	for i := 0; i < max(len(direct), len(gw)); i++ {
		for _, s := range []struct {
			name string
			rs   []round
		}{{"direct", direct}, {"gateway", gw}} {
			if i >= len(s.rs) {
				continue
			}
			r := s.rs[i]
			fmt.Fprintf(w, "| %d | %s | %d | %d | %.0f | %d | %d |", i+1, s.name, r.Requests, r.Errors, r.RPS, r.P50us, r.P99us)
			if withCPU {
				fmt.Fprintf(w, " %.0f | %.0f |", r.backendUs, r.gatewayUs)
			}
			fmt.Fprintln(w)
		}
	}
	d, g := medians(direct), medians(gw)
	fmt.Fprintln(w)
	if withCPU {
		fmt.Fprintln(w, "| median of rounds | rps | p50 (µs) | p99 (µs) | errors | backend CPU µs/req | gateway CPU µs/req |")
		fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
		fmt.Fprintf(w, "| direct | %.0f | %.0f | %.0f | %d | %.0f | %.0f |\n", d.rps, d.p50, d.p99, d.errors, d.backendUs, d.gatewayUs)
		fmt.Fprintf(w, "| gateway | %.0f | %.0f | %.0f | %d | %.0f | %.0f |\n", g.rps, g.p50, g.p99, g.errors, g.backendUs, g.gatewayUs)
	} else {
		fmt.Fprintln(w, "| median of rounds | rps | p50 (µs) | p99 (µs) | errors |")
		fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: |")
		fmt.Fprintf(w, "| direct | %.0f | %.0f | %.0f | %d |\n", d.rps, d.p50, d.p99, d.errors)
		fmt.Fprintf(w, "| gateway | %.0f | %.0f | %.0f | %d |\n", g.rps, g.p50, g.p99, g.errors)
	}
	fmt.Fprintln(w)
	var ratios []string
	for i := 0; i < min(len(direct), len(gw)); i++ {
		if direct[i].RPS > 0 {
			ratios = append(ratios, fmt.Sprintf("%.3f", gw[i].RPS/direct[i].RPS))
		}
	}
	fmt.Fprintf(w, "- throughput gateway/direct (medians): **%.3f×** (per round: %s)\n", g.rps/d.rps, strings.Join(ratios, ", "))
	fmt.Fprintf(w, "- added p50 latency: **%+.0f µs** (%.0f → %.0f)\n", g.p50-d.p50, d.p50, g.p50)
	fmt.Fprintf(w, "- added p99 latency: **%+.0f µs** (%.0f → %.0f)\n", g.p99-d.p99, d.p99, g.p99)
	if withCPU && d.backendUs > 0 {
		total := g.backendUs + g.gatewayUs
		fmt.Fprintf(w, "- server CPU per request: direct %.0f µs (backend); through the gateway %.0f µs "+
			"(backend %.0f + gateway %.0f), %.2f× the direct cost\n", d.backendUs, total, g.backendUs, g.gatewayUs, total/d.backendUs)
	}
	return nil
}

type agg struct {
	rps, p50, p99        float64
	backendUs, gatewayUs float64
	errors               int64
}

func medians(rs []round) agg {
	med := func(f func(round) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		sort.Float64s(v)
		if n := len(v); n%2 == 0 {
			return (v[n/2-1] + v[n/2]) / 2
		}
		return v[len(v)/2]
	}
	var a agg
	a.rps = med(func(r round) float64 { return r.RPS })
	a.p50 = med(func(r round) float64 { return float64(r.P50us) })
	a.p99 = med(func(r round) float64 { return float64(r.P99us) })
	a.backendUs = med(func(r round) float64 { return r.backendUs })
	a.gatewayUs = med(func(r round) float64 { return r.gatewayUs })
	for _, r := range rs {
		a.errors += r.Errors
	}
	return a
}
