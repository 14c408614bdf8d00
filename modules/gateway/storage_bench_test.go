package gateway_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// scanFiles is how many files the benchmarked scan reads.
const scanFiles = 1000

// BenchmarkSignRequest is one signRequest over loopback HTTP through the
// whole gateway: Caddy, the Iceberg door, the caller's token (lakegate's
// own issuer, ES256), the policy decision (cached after the first, as
// within a scan), the table's locations and SigV4. One op is one request
// for a GET of a file of the table, with the same token each time, as a
// client sends it. Against a revision before the verified-token cache
// (examples/bench/cpu-against.sh) it is the same request with the token
// verified every time.
func BenchmarkSignRequest(b *testing.B) {
	st := fakeStore(b)
	base, _ := storageGateway(b, st)
	writer := issuedToken(b, base, "writer", "writer-secret")
	createSignTable(b, base, writer)
	body := signReq("GET", st.endpoint+"/"+st.bucket+"/"+tableKey+"/data/part-0.parquet")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	b.Cleanup(client.CloseIdleConnections)
	b.ReportAllocs()
	for b.Loop() {
		signOnce(b, client, base, writer, body)
	}
}

// BenchmarkRemoteSigningScan is what signing the GETs of a scan of 1,000
// files costs a client: "static-keys" signs them itself with the storage
// keys (SigV4, as a client holding the keys does); "remote-signing" asks
// lakegate's signRequest for each over loopback HTTP, as PyIceberg and
// Iceberg Java do, the decision (policy, table locations) cached after
// the first. One op is the whole scan; ns/file is per file.
func BenchmarkRemoteSigningScan(b *testing.B) {
	st := fakeStore(b)
	base, _ := storageGateway(b, st)
	writer := issuedToken(b, base, "writer", "writer-secret")
	createSignTable(b, base, writer)
	uris := make([]string, scanFiles)
	bodies := make([]string, scanFiles)
	for i := range uris {
		uris[i] = st.endpoint + "/" + st.bucket + "/" + tableKey + "/data/part-" + strconv.Itoa(i) + ".parquet"
		bodies[i] = signReq("GET", uris[i])
	}
	perFile := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*scanFiles), "ns/file")
	}

	b.Run("static-keys", func(b *testing.B) {
		signer := v4.NewSigner()
		creds := aws.Credentials{AccessKeyID: st.keyID, SecretAccessKey: st.secret}
		b.ReportAllocs()
		for b.Loop() {
			for _, u := range uris {
				req, _ := http.NewRequest(http.MethodGet, u, nil)
				req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
				if err := signer.SignHTTP(context.Background(), creds, req, "UNSIGNED-PAYLOAD", "s3", st.region, time.Now()); err != nil {
					b.Fatal(err)
				}
			}
		}
		perFile(b)
	})

	b.Run("remote-signing", func(b *testing.B) {
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
		b.ReportAllocs()
		for b.Loop() {
			for _, body := range bodies {
				signOnce(b, client, base, writer, body)
			}
		}
		perFile(b)
	})
}

// signOnce sends one signRequest body with token and fails b unless the
// gateway answered 200.
func signOnce(b *testing.B, client *http.Client, base, token, body string) {
	req, _ := http.NewRequest(http.MethodPost, base+signPath, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("sign: %d", resp.StatusCode)
	}
}
