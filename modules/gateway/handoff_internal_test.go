package gateway

import (
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// BenchmarkHandoffRequest is what lakegate_handoff costs a request: one
// keep-alive client's GETs to a Go HTTP server answering 1 KiB, on a plain
// listener and on one wrapped by the handoff (a lock and a copy of the
// request's bytes per read, a lock per write).
//
//	go test ./modules/gateway/ -run '^$' -bench BenchmarkHandoffRequest -count 6 -benchmem
func BenchmarkHandoffRequest(b *testing.B) {
	body := make([]byte, 1024)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(body) })
	for _, wrapped := range []bool{false, true} {
		name := "plain"
		if wrapped {
			name = "handoff"
		}
		b.Run(name, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(b, err)
			if wrapped {
				ln = (&Handoff{}).WrapListener(ln)
			}
			srv := &http.Server{Handler: handler}
			go func() { _ = srv.Serve(ln) }()
			defer srv.Close()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			url := "http://" + ln.Addr().String() + "/"
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				resp, err := client.Get(url)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}

// TestEndsConnection: an answer ends its connection, and is not handed
// over, when it says so or is HTTP/1.0's (a client may read its body
// until the close); a keep-alive answer, whose client sends its next
// request on the connection, is handed over.
func TestEndsConnection(t *testing.T) {
	for head, ends := range map[string]bool{
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok":                         false,
		"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok":    true,
		"HTTP/1.1 200 OK\r\nContent-Length: 17\r\n\r\n\r\nConnection: close\r\n": false, // in the body
		"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the close":     true,
	} {
		assert.Equal(t, ends, endsConnection([]byte(head)), "%q", head)
	}
}
