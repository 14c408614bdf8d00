//go:build linux

package gateway

import (
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// reusePortListen binds addr with SO_REUSEPORT, as Caddy binds each
// config's listener.
func reusePortListen(t *testing.T, addr string) net.Listener {
	t.Helper()
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1) })
		if err != nil {
			return err
		}
		return serr
	}}
	ln, err := lc.Listen(context.Background(), "tcp", addr)
	require.NoError(t, err)
	return ln
}

// TestHandoffSteersNewConnectionsToTheFirstSocket: a later config's
// socket on the address (bound as a reload binds it) is given no new
// connection, so closing it resets none; they all reach the newest
// config's server through the first socket, kept open after the config
// that bound it closed its listener.
func TestHandoffSteersNewConnectionsToTheFirstSocket(t *testing.T) {
	first := reusePortListen(t, "127.0.0.1:0")
	addr := first.Addr().String()
	old := (&Handoff{}).WrapListener(first)
	defer old.Close()
	second := reusePortListen(t, addr) // not accepted on: what it gets stays queued
	defer second.Close()

	// The kernel would spread these over the sockets by their ports.
	accepted := make(chan net.Conn)
	go func() {
		for {
			c, err := old.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	const n = 40
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
	}
	for got := 0; got < n; {
		select {
		case c := <-accepted:
			c.Close()
			got++
		default:
			require.False(t, queued(t, second), "a connection was queued on the later socket")
			runtime.Gosched()
		}
	}
	require.False(t, queued(t, second), "a connection was queued on the later socket")

	// The first config's listener closes: the newest gets the connections,
	// through the first socket.
	newer := (&Handoff{}).WrapListener(second)
	defer newer.Close()
	require.NoError(t, old.Close())
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	got, err := newer.Accept()
	require.NoError(t, err)
	assert.Equal(t, c.LocalAddr().String(), got.RemoteAddr().String())
	got.Close()
}

// queued takes a connection waiting in ln's accept queue, if there is one.
func queued(t *testing.T, ln net.Listener) bool {
	t.Helper()
	raw, err := ln.(*net.TCPListener).SyscallConn()
	require.NoError(t, err)
	var fd int
	var aerr error
	require.NoError(t, raw.Control(func(s uintptr) { fd, _, aerr = unix.Accept4(int(s), unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC) }))
	if aerr == nil {
		unix.Close(fd)
		return true
	}
	require.ErrorIs(t, aerr, unix.EAGAIN)
	return false
}

// BenchmarkHandoffRequest is what lakegate_handoff costs a request: one
// keep-alive client's GETs to a Go HTTP server answering 1 KiB, on a plain
// listener and on one wrapped by the handoff (a lock and a copy of the
// request's bytes per read, a lock per write and a look at an answer's
// header).
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
			start := processCPU(b)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				resp, err := client.Get(url)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			b.StopTimer()
			// CPU time (client and server, user and system) is steadier than
			// wall time on a shared machine.
			b.ReportMetric(float64(processCPU(b)-start)/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU is the process's user and system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	var ru unix.Rusage
	require.NoError(b, unix.Getrusage(unix.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
