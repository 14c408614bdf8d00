// Command signscan reads a table's files from S3 the two ways a client
// can, for examples/bench/sign-scan.sh: signing each GET itself with the
// storage keys ("static"), or asking lakegate's signRequest for each
// signature and sending the GET with the headers it answers ("remote"),
// as PyIceberg and Iceberg Java do with remote signing. Its modes:
//
//	signscan -setup -url http://127.0.0.1:23101 -s3 http://KEY:SECRET@127.0.0.1:18131 -files 1000
//	    create bucket -bucket (if given), then as writer:writer-secret
//	    create namespace -namespace and table
//	    -table through the gateway (remote signing asked), then PUT -files
//	    objects of -size bytes under the table's data path with the keys
//	    of -s3 (the gateway's own keys)
//	signscan -scan static|remote -url ... -s3 ... -files 1000 -repeat 3
//	    load the table (remote signing asked) for its location and signer,
//	    take a token for -principal (reader by default), then read the
//	    -files objects -repeat times; prints one JSON object: {files,
//	    seconds, client_cpu_seconds, bytes, errors}, and NAME_cpu_seconds
//	    for each process of -cpu-of NAME=PID (the gateway's, the store's).
//	    Set-up (the token, the load) is outside the measured part.
//	signscan -cleanup -s3 ... -bucket B
//	    delete every object of bucket B and the bucket
//
// It only talks to loopback addresses.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// store is an S3-compatible endpoint and the key that signs for it.
type store struct {
	endpoint string // scheme://host:port
	region   string
	creds    aws.Credentials
}

func main() {
	var (
		setup     = flag.Bool("setup", false, "create the table and its -files objects, then exit")
		scan      = flag.String("scan", "", "read the objects: static (SigV4 with the -s3 keys) or remote (signRequest)")
		cleanup   = flag.Bool("cleanup", false, "delete bucket -bucket and its objects")
		base      = flag.String("url", "http://127.0.0.1:23101", "the gateway, without /v1 (loopback only)")
		s3URL     = flag.String("s3", os.Getenv("LAKEGATE_TEST_S3"), "http://KEY:SECRET@host:port of the S3 store")
		region    = flag.String("region", "us-east-1", "the store's region")
		bucket    = flag.String("bucket", "", "for -setup: create this bucket first; for -cleanup: the bucket")
		catalog   = flag.String("catalog", "lake", "the catalog's prefix")
		namespace = flag.String("namespace", "bench", "namespace of the table")
		table     = flag.String("table", "scan", "table name")
		files     = flag.Int("files", 1000, "objects in the table's data path")
		size      = flag.Int("size", 4096, "for -setup: bytes per object")
		repeat    = flag.Int("repeat", 1, "for -scan: reads of all -files")
		principal = flag.String("principal", "reader:reader-secret", "for -scan: client_id:client_secret")
		pids      = flag.String("cpu-of", "", "for -scan: name=PID,...: also the CPU each of these processes used during the scan (Linux /proc)")
	)
	flag.Parse()
	st, err := parseStore(*s3URL, *region)
	if err != nil {
		fail(err)
	}
	gw := gateway{base: *base, prefix: *catalog, http: &http.Client{Timeout: 30 * time.Second}}
	if err := loopback(*base); err != nil {
		fail(err)
	}
	tbl := *namespace + "/tables/" + *table
	switch {
	case *setup:
		err = runSetup(gw, st, *bucket, *namespace, *table, *files, *size)
	case *scan != "":
		err = runScan(gw, st, *scan, tbl, *principal, *files, *repeat, *pids)
	case *cleanup:
		err = st.deleteBucket(gw.http, *bucket)
	default:
		err = errors.New("one of -setup, -scan, -cleanup")
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "signscan:", err)
	os.Exit(1)
}

func parseStore(raw, region string) (store, error) {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return store{}, fmt.Errorf("-s3 %q: want http://KEY:SECRET@host:port", raw)
	}
	secret, _ := u.User.Password()
	if err := loopback(raw); err != nil {
		return store{}, err
	}
	return store{endpoint: u.Scheme + "://" + u.Host, region: region,
		creds: aws.Credentials{AccessKeyID: u.User.Username(), SecretAccessKey: secret}}, nil
}

func loopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s is not a loopback address", u.Host)
	}
	return nil
}

// gateway is lakegate's Iceberg REST door.
type gateway struct {
	base, prefix string
	http         *http.Client
}

// token is a client-credentials token for id:secret.
func (g gateway) token(principal string) (string, error) {
	id, secret, _ := strings.Cut(principal, ":")
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	err := g.call(http.MethodPost, "/v1/oauth/tokens", "", "application/x-www-form-urlencoded",
		strings.NewReader(form.Encode()), &tok)
	return tok.AccessToken, err
}

// call sends one request and decodes a 200's JSON answer into out.
func (g gateway) call(method, path, token, contentType string, body io.Reader, out any) error {
	req, err := http.NewRequest(method, g.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("X-Iceberg-Access-Delegation", "remote-signing")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := g.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}

// loaded is what a scan needs of a LoadTable answer.
type loaded struct {
	Metadata struct {
		Location string `json:"location"`
	} `json:"metadata"`
	Config map[string]string `json:"config"`
}

// dataKeys are the bucket and the keys of the table's n objects.
func (l loaded) dataKeys(n int) (bucket string, keys []string, err error) {
	bucket, prefix, ok := strings.Cut(strings.TrimPrefix(l.Metadata.Location, "s3://"), "/")
	if !ok || !strings.HasPrefix(l.Metadata.Location, "s3://") {
		return "", nil, fmt.Errorf("table location %q is not s3://bucket/path", l.Metadata.Location)
	}
	for i := range n {
		keys = append(keys, prefix+"/data/part-"+strconv.Itoa(i)+".parquet")
	}
	return bucket, keys, nil
}

func runSetup(g gateway, st store, bucket, namespace, name string, files, size int) error {
	if bucket != "" {
		if err := st.do(g.http, http.MethodPut, bucket, "", nil, http.StatusOK); err != nil {
			return err
		}
	}
	tok, err := g.token("writer:writer-secret")
	if err != nil {
		return err
	}
	ns, _ := json.Marshal(map[string]any{"namespace": []string{namespace}})
	if err := g.call(http.MethodPost, "/v1/"+g.prefix+"/namespaces", tok, "application/json", bytes.NewReader(ns), nil); err != nil {
		return err
	}
	create, _ := json.Marshal(map[string]any{"name": name, "schema": map[string]any{"type": "struct", "schema-id": 0,
		"fields": []any{map[string]any{"id": 1, "name": "a", "type": "int", "required": false}}}})
	var l loaded
	if err := g.call(http.MethodPost, "/v1/"+g.prefix+"/namespaces/"+namespace+"/tables", tok, "application/json",
		bytes.NewReader(create), &l); err != nil {
		return err
	}
	bucket, keys, err := l.dataKeys(files)
	if err != nil {
		return err
	}
	body := make([]byte, size)
	_, _ = rand.Read(body)
	for _, k := range keys {
		if err := st.do(g.http, http.MethodPut, bucket, k, body, http.StatusOK); err != nil {
			return err
		}
	}
	fmt.Printf("%d objects of %d bytes under s3://%s/%s\n", files, size, bucket, strings.TrimSuffix(keys[0], "part-0.parquet"))
	return nil
}

// runScan reads the table's objects repeat times, signing each GET the
// way mode says, and prints the measured part as JSON.
func runScan(g gateway, st store, mode, tbl, principal string, files, repeat int, pids string) error {
	tok, err := g.token(principal)
	if err != nil {
		return err
	}
	var l loaded
	if err := g.call(http.MethodGet, "/v1/"+g.prefix+"/namespaces/"+tbl, tok, "", nil, &l); err != nil {
		return err
	}
	bucket, keys, err := l.dataKeys(files)
	if err != nil {
		return err
	}
	var sign func(uri string) (http.Header, error)
	switch mode {
	case "static":
		signer := v4.NewSigner()
		sign = func(uri string) (http.Header, error) {
			req, err := http.NewRequest(http.MethodGet, uri, nil)
			if err != nil {
				return nil, err
			}
			req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
			err = signer.SignHTTP(context.Background(), st.creds, req, "UNSIGNED-PAYLOAD", "s3", st.region, time.Now())
			return req.Header, err
		}
	case "remote":
		signPath := "/" + strings.TrimPrefix(l.Config["s3.signer.endpoint"], "/")
		if l.Config["s3.remote-signing-enabled"] != "true" || signPath == "/" {
			return errors.New("the table answer does not offer remote signing")
		}
		sign = func(uri string) (http.Header, error) { return g.sign(tok, signPath, st.region, uri) }
	default:
		return fmt.Errorf("-scan %q: static or remote", mode)
	}
	others, err := parsePIDs(pids)
	if err != nil {
		return err
	}
	others0 := procCPU(others)
	cpu0, t0 := cpuSeconds(), time.Now()
	var n, bytesRead, errs int
	for range repeat {
		for _, k := range keys {
			uri := st.endpoint + "/" + bucket + "/" + k
			got, err := st.get(g.http, uri, sign)
			n, bytesRead = n+1, bytesRead+got
			if err != nil {
				errs++
				if errs == 1 {
					fmt.Fprintln(os.Stderr, "signscan: first error:", err)
				}
			}
		}
	}
	res := map[string]any{"files": n, "seconds": time.Since(t0).Seconds(),
		"client_cpu_seconds": cpuSeconds() - cpu0, "bytes": bytesRead, "errors": errs}
	for name, c := range procCPU(others) {
		res[name+"_cpu_seconds"] = c - others0[name]
	}
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
	if errs > 0 {
		return fmt.Errorf("%d of %d reads failed", errs, n)
	}
	return nil
}

// parsePIDs reads name=PID,... .
func parsePIDs(s string) (map[string]int, error) {
	pids := map[string]int{}
	for part := range strings.SplitSeq(s, ",") {
		if part == "" {
			continue
		}
		name, v, _ := strings.Cut(part, "=")
		pid, err := strconv.Atoi(v)
		if err != nil || name == "" {
			return nil, fmt.Errorf("-cpu-of %q: want name=PID", part)
		}
		pids[name] = pid
	}
	return pids, nil
}

// procCPU is the user+system CPU seconds each process used so far, from
// /proc/PID/stat (clock ticks of 10 ms); a process not readable is left
// out.
func procCPU(pids map[string]int) map[string]float64 {
	out := map[string]float64{}
	for name, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndex(string(b), ") ") // past "pid (comm) ": comm may hold ") "
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b)[i+2:])
		if len(f) < 13 {
			continue
		}
		utime, _ := strconv.ParseFloat(f[11], 64)
		stime, _ := strconv.ParseFloat(f[12], 64)
		out[name] = (utime + stime) / 100 // USER_HZ is 100 on Linux
	}
	return out
}

// sign asks signRequest for the headers of a GET of uri.
func (g gateway) sign(tok, path, region, uri string) (http.Header, error) {
	body, _ := json.Marshal(map[string]any{"region": region, "method": http.MethodGet, "uri": uri,
		"headers": map[string][]string{"X-Amz-Content-Sha256": {"UNSIGNED-PAYLOAD"}}})
	var res struct {
		URI     string              `json:"uri"`
		Headers map[string][]string `json:"headers"`
	}
	if err := g.call(http.MethodPost, path, tok, "application/json", bytes.NewReader(body), &res); err != nil {
		return nil, err
	}
	if res.URI != uri {
		return nil, fmt.Errorf("signed %q, asked %q", res.URI, uri)
	}
	return res.Headers, nil
}

// get reads uri with the headers sign gives and returns the bytes read.
func (st store) get(c *http.Client, uri string, sign func(string) (http.Header, error)) (int, error) {
	h, err := sign(uri)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequest(http.MethodGet, uri, nil)
	if err != nil {
		return 0, err
	}
	for name, vs := range h {
		if !strings.EqualFold(name, "Host") {
			req.Header[http.CanonicalHeaderKey(name)] = vs
		}
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", uri, resp.Status)
	}
	return int(n), err
}

// do sends one request signed with the store's keys and wants status.
func (st store) do(c *http.Client, method, bucket, key string, body []byte, want int) error {
	u := st.endpoint + "/" + bucket
	if key != "" {
		u += "/" + key
	}
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hash := "UNSIGNED-PAYLOAD"
	req.Header.Set("X-Amz-Content-Sha256", hash)
	if err := v4.NewSigner().SignHTTP(context.Background(), st.creds, req, hash, "s3", st.region, time.Now()); err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %s %s", method, u, resp.Status, b)
	}
	return nil
}

// deleteBucket deletes every object of bucket (listed a page at a time)
// and the bucket.
func (st store) deleteBucket(c *http.Client, bucket string) error {
	if bucket == "" {
		return errors.New("-cleanup needs -bucket")
	}
	for {
		keys, err := st.list(c, bucket)
		if err != nil {
			return err
		}
		if len(keys) == 0 {
			return st.do(c, http.MethodDelete, bucket, "", nil, http.StatusNoContent)
		}
		for _, k := range keys {
			if err := st.do(c, http.MethodDelete, bucket, k, nil, http.StatusNoContent); err != nil {
				return err
			}
		}
	}
}

// list is the first page of bucket's keys (ListObjectsV2).
func (st store) list(c *http.Client, bucket string) ([]string, error) {
	req, err := http.NewRequest(http.MethodGet, st.endpoint+"/"+bucket+"?list-type=2", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	if err := v4.NewSigner().SignHTTP(context.Background(), st.creds, req, "UNSIGNED-PAYLOAD", "s3", st.region, time.Now()); err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("list %s: %s %s", bucket, resp.Status, b)
	}
	var page struct {
		Contents []struct{ Key string }
	}
	if err := xml.Unmarshal(b, &page); err != nil {
		return nil, fmt.Errorf("list %s: %w", bucket, err)
	}
	keys := make([]string, 0, len(page.Contents))
	for _, c := range page.Contents {
		keys = append(keys, c.Key)
	}
	return keys, nil
}
