//go:build linux

package gateway

import (
	"context"
	"errors"
	"net"
	"reflect"
	"syscall"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"
)

// shareSocket returns a duplicate of ln's socket, which keeps it open
// after the config that bound it closes ln, and has the kernel queue every
// new connection on it: later configs' sockets on the same address (Caddy
// binds each with SO_REUSEPORT) then receive none, and a reload closing
// one resets none. It returns nil, and the address goes on as without the
// wrapper, when ln is not a TCP socket.
//
// The steering is a classic BPF program on the address's SO_REUSEPORT
// group answering "socket 0": the group's first socket, which is this one
// as long as it is open (the kernel fills a closed socket's place with the
// last one, never with the first). Go (1.24 and later) binds listeners
// with MPTCP where the kernel has it, and an MPTCP socket takes no such
// program: it is attached through a plain TCP socket that joins the group
// for it (steer), returned too, to be accepted on and closed with the
// shared one. It is attached only when this process holds every socket on
// the address, so that it never steers another process's connections
// (checkSoleListener refuses such an address at start anyway).
func shareSocket(ln net.Listener) []net.Listener {
	tcp := tcpListenerOf(ln)
	if tcp == nil {
		return nil
	}
	f, err := tcp.File() // a duplicate descriptor of the same socket
	if err != nil {
		return nil
	}
	defer f.Close()
	dup, err := net.FileListener(f)
	if err != nil {
		return nil
	}
	log := caddy.Log().Named("lakegate.handoff").With(zap.String("address", tcp.Addr().String()))
	if !soleListener(tcp.Addr().(*net.TCPAddr)) {
		log.Warn("another process listens on the address: new connections queued on a config's socket as a reload closes it are reset")
		return []net.Listener{dup}
	}
	helper, err := steer(tcp)
	if err != nil {
		log.Warn("cannot steer new connections to one socket: those queued on a config's socket as a reload closes it are reset", zap.Error(err))
	}
	if helper == nil {
		return []net.Listener{dup}
	}
	return []net.Listener{dup, helper}
}

// steer binds a plain TCP socket to ln's address in its SO_REUSEPORT
// group (the same IPV6_V6ONLY, or it would not join) and attaches `ret #0`
// to the group through it. A socket bound without SO_REUSEPORT (not by
// Caddy) has no group, and no helper is needed.
func steer(ln *net.TCPListener) (net.Listener, error) {
	raw, err := ln.SyscallConn()
	if err != nil {
		return nil, err
	}
	reuse, v6only, oerr := 0, -1, error(nil)
	if err := raw.Control(func(fd uintptr) {
		reuse, oerr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT)
		if oerr == nil && ln.Addr().(*net.TCPAddr).IP.To4() == nil {
			v6only, oerr = unix.GetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_V6ONLY)
		}
	}); err != nil || oerr != nil {
		return nil, errors.Join(err, oerr)
	}
	if reuse == 0 {
		return nil, nil // no other socket can join it: nothing to steer
	}
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
			if serr == nil && v6only >= 0 {
				serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, v6only)
			}
		})
		return errors.Join(err, serr)
	}}
	lc.SetMultipathTCP(false)
	helper, err := lc.Listen(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		return nil, err
	}
	hraw, err := helper.(*net.TCPListener).SyscallConn()
	if err != nil {
		helper.Close()
		return nil, err
	}
	prog := []unix.SockFilter{{Code: unix.BPF_RET | unix.BPF_K, K: 0}}
	var serr error
	err = hraw.Control(func(fd uintptr) {
		serr = unix.SetsockoptSockFprog(int(fd), unix.SOL_SOCKET, unix.SO_ATTACH_REUSEPORT_CBPF,
			&unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]})
	})
	if err = errors.Join(err, serr); err != nil {
		helper.Close()
		return nil, err
	}
	return helper, nil
}

// tcpListenerOf unwraps Caddy's listener (it wraps the socket to count
// its users) down to the *net.TCPListener, or returns nil.
func tcpListenerOf(ln net.Listener) *net.TCPListener {
	for i := 0; i < 8 && ln != nil; i++ {
		if tcp, ok := ln.(*net.TCPListener); ok {
			return tcp
		}
		v := reflect.ValueOf(ln)
		if v.Kind() == reflect.Pointer {
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			return nil
		}
		f := v.FieldByName("Listener") // an embedded net.Listener
		if !f.IsValid() || !f.CanInterface() {
			return nil
		}
		ln, _ = f.Interface().(net.Listener)
	}
	return nil
}

// soleListener reports whether every listening socket on addr (exactly:
// the members of its SO_REUSEPORT group) is this process's.
func soleListener(addr *net.TCPAddr) bool {
	own, err := ownSocketInodes()
	if err != nil {
		return false
	}
	all, err := listeningSockets()
	if err != nil {
		return false
	}
	for _, s := range all {
		if s.port == addr.Port && s.ip.Equal(addr.IP) && !own[s.inode] {
			return false
		}
	}
	return true
}
