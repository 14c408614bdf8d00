//go:build linux

package gateway

import (
	"context"
	"net"
	"runtime"
	"syscall"
	"testing"

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
