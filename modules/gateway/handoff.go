package gateway

import (
	"bytes"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

func init() {
	caddy.RegisterModule(Handoff{})
}

// Handoff is the listener wrapper `lakegate_handoff`: a config reload
// loses no connection on the addresses it keeps.
//
// Without it a reload loses connections in two ways (docs/operating.md,
// "Reloads"):
//
//   - The old config's server shuts down with Go's http.Server.Shutdown,
//     which closes each keep-alive connection idle between two requests at
//     once; a client sending its next request on it at that moment gets a
//     reset or an EOF for a request that never ran (a client that does not
//     retry a POST sees a failed commit). Here that close hands the
//     connection, with any bytes of the next request already read, to the
//     newest server on the address, which answers it under the new config.
//   - Caddy binds each config's listening socket anew with SO_REUSEPORT,
//     and the kernel spreads new connections over the old and the new
//     socket; those queued on the old one when it closes are reset. Here
//     the first socket bound on the address is kept open for as long as
//     any config listens there, and (Linux) the kernel is told to queue
//     every new connection on it: the later configs' sockets receive none,
//     and closing them loses nothing (shareSocket).
//
// With no newer server on the address (the process exits, or the address
// left the config) connections are closed as before. Only plain HTTP/1.x
// connections are handed over once served: a TLS or HTTP/2 connection
// carries state of the old server and is closed as before (HTTP/2 clients
// get a GOAWAY first). Put the wrapper before `tls`.
type Handoff struct{}

// CaddyModule returns the Caddy module information.
func (Handoff) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "caddy.listeners.lakegate_handoff", New: func() caddy.Module { return new(Handoff) }}
}

// UnmarshalCaddyfile reads `lakegate_handoff` (no options).
func (*Handoff) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next()
	if d.NextArg() || d.NextBlock(0) {
		return d.Err("lakegate_handoff takes no options")
	}
	return nil
}

// WrapListener wraps ln and makes it the receiver of the connections
// accepted on its address, and of those handed over by older servers.
func (*Handoff) WrapListener(ln net.Listener) net.Listener {
	l := &handoffListener{Listener: ln, key: ln.Addr().Network() + "/" + ln.Addr().String(),
		handed: make(chan net.Conn), done: make(chan struct{})}
	for _, shared := range handoffAddrs.add(l) {
		go acceptLoop(l.key, shared, nil)
	}
	// The config's own socket: with the kernel queuing every connection
	// on the shared one it accepts none, but without (not Linux, or the
	// socket could not be shared) it takes its part.
	go acceptLoop(l.key, ln, l.done)
	return l
}

// handoffAddrs is the process's open handoff listeners by address.
var handoffAddrs = &handoffRegistry{by: map[string]*handoffAddr{}}

type handoffRegistry struct {
	mu sync.Mutex
	by map[string]*handoffAddr
}

// handoffAddr is one address: its listeners, the newest last (the one
// connections go to), and the sockets shared by the configs that listen
// there (none when they could not be shared).
type handoffAddr struct {
	listeners []*handoffListener
	shared    []net.Listener
}

// add registers l; on the first listener of an address it returns the
// sockets shared from then on, for their accept loops.
func (r *handoffRegistry) add(l *handoffListener) []net.Listener {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.by[l.key]
	if a == nil {
		a = &handoffAddr{shared: shareSocket(l.Listener)}
		r.by[l.key] = a
		a.listeners = append(a.listeners, l)
		return a.shared
	}
	a.listeners = append(a.listeners, l)
	return nil
}

// remove unregisters l; the last listener of an address closes the shared
// socket (the address left the config, or the process exits).
func (r *handoffRegistry) remove(l *handoffListener) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.by[l.key]
	if a == nil {
		return
	}
	for i, x := range a.listeners {
		if x == l {
			a.listeners = append(a.listeners[:i:i], a.listeners[i+1:]...)
			break
		}
	}
	if len(a.listeners) == 0 {
		delete(r.by, l.key)
		for _, ln := range a.shared {
			ln.Close()
		}
	}
}

// newest is the listener a connection on key goes to, nil when none is
// open.
func (r *handoffRegistry) newest(key string) *handoffListener {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a := r.by[key]; a != nil && len(a.listeners) > 0 {
		return a.listeners[len(a.listeners)-1]
	}
	return nil
}

// acceptLoop accepts on ln until it is closed (or, for a config's own
// listener, whose wrappers before this one may answer another error once
// closed, until done is) and gives each connection to the newest listener
// on key.
func acceptLoop(key string, ln net.Listener, done <-chan struct{}) {
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			select {
			case <-done:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// A temporary failure (out of file descriptors): as Go's
			// server does, wait and try again.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		if _, isTLS := c.(*tls.Conn); isTLS {
			// After `tls` (misplaced): Go's server must see the *tls.Conn
			// itself, so it is not wrapped and never handed over once
			// served.
			deliver(key, func(*handoffListener) net.Conn { return c }, c)
			continue
		}
		deliver(key, func(l *handoffListener) net.Conn { return &handoffConn{Conn: c, from: l} }, c)
	}
}

// deliver gives wrap(l)'s connection to the newest open listener l on
// key, or closes raw when there is none.
func deliver(key string, wrap func(*handoffListener) net.Conn, raw net.Conn) {
	for l := handoffAddrs.newest(key); l != nil; l = handoffAddrs.newest(key) {
		if l.receive(wrap(l)) {
			return
		}
	}
	raw.Close()
}

// handoffListener is one config's listener on an address: its server
// accepts the connections the accept loops deliver to it.
type handoffListener struct {
	net.Listener // the config's own socket
	key          string
	handed       chan net.Conn
	done         chan struct{}
	closeOnce    sync.Once
}

func (l *handoffListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.handed:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting; the server closing it is shutting down, and its
// idle connections are handed to the newest listener from now on.
func (l *handoffListener) Close() error {
	var err error
	l.closeOnce.Do(func() {
		handoffAddrs.remove(l)
		close(l.done)
		err = l.Listener.Close()
	})
	return err
}

// receive gives c to the listener's server, unless the listener closes.
func (l *handoffListener) receive(c net.Conn) bool {
	select {
	case l.handed <- c:
		return true
	case <-l.done:
		return false
	}
}

// handoffConn is a connection that its server may hand over on close.
type handoffConn struct {
	net.Conn
	from *handoffListener

	mu      sync.Mutex
	prefix  []byte // bytes read by the server that handed it over
	pending []byte // bytes read since the last write: the next request's
	// overflow: more than maxPending bytes were read since the last
	// write, which a hand-over could not give the next server.
	overflow bool
	reading  bool // the server waits in Read
	seen     bool // the first bytes were read
	plain    bool // they are an HTTP/1.x request, not TLS or HTTP/2
	upgraded bool // a 101 answer: the bytes are no longer HTTP/1.x's
	// closing: the last answer told the client the connection ends
	// (Connection: close, or HTTP/1.0's default): it may read its answer
	// until the connection closes, which a hand-over would keep open.
	closing bool
	// answering: bytes were read since the last write, so the next write
	// starts an answer (its status line and header).
	answering bool
	handing   bool // a close asked for the hand-over
	closed    bool
}

// maxPending is the most of a next request kept for a hand-over. Go's
// server counts a connection idle, and closes it on shutdown, until it has
// read a request's header (it reads the body later): more than a header's
// bytes are not needed.
const maxPending = 64 << 10

// h2Preface starts an HTTP/2 connection (prior knowledge or h2c).
var h2Preface = []byte("PRI * HTTP/2")

// tlsHandshake is a TLS record's first byte.
const tlsHandshake = 0x16

// switching starts the answer to an upgrade (WebSocket): what follows on
// the connection is not HTTP/1.x, and it is never handed over.
var switching = []byte("HTTP/1.1 101 ")

func (c *handoffConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	if c.handing || c.closed {
		c.mu.Unlock()
		return 0, net.ErrClosed
	}
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		c.keep(p[:n])
		c.mu.Unlock()
		return n, nil
	}
	c.reading = true
	c.mu.Unlock()

	n, err := c.Conn.Read(p)

	c.mu.Lock()
	c.reading = false
	if c.handing {
		pending := append(c.pending, p[:n]...)
		c.mu.Unlock()
		// What this Read got belongs to the next server: the old one
		// never sees it, so a request is never served twice.
		c.handOver(pending)
		return 0, net.ErrClosed
	}
	if n > 0 {
		if !c.seen {
			c.seen = true
			c.plain = p[0] != tlsHandshake && !bytes.HasPrefix(h2Preface, p[:min(n, len(h2Preface))])
		}
		c.keep(p[:n])
		c.answering = true
	}
	c.mu.Unlock()
	return n, err
}

// keep adds read bytes to pending, up to maxPending.
func (c *handoffConn) keep(b []byte) {
	if c.overflow {
		return
	}
	if len(c.pending)+len(b) > maxPending {
		c.overflow, c.pending = true, nil
		return
	}
	c.pending = append(c.pending, b...)
}

func (c *handoffConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	if c.handing || c.closed {
		// The old server's goroutine, winding down, writes nothing on
		// what is the new server's connection.
		c.mu.Unlock()
		return 0, net.ErrClosed
	}
	c.pending, c.overflow = c.pending[:0], false
	if c.answering {
		c.answering = false
		c.upgraded = c.upgraded || bytes.HasPrefix(p, switching)
		c.closing = endsConnection(p)
	}
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// endsConnection reports whether an answer, from its first write (Go's
// server writes the status line and header at once), tells the client
// the connection ends after it: HTTP/1.0 (Go answers an HTTP/1.0 request
// in kind) or Connection: close, as Go's server writes it.
func endsConnection(head []byte) bool {
	if !bytes.HasPrefix(head, http11) {
		return true
	}
	if end := bytes.Index(head, headerEnd); end >= 0 {
		head = head[:end+2]
	}
	return bytes.Contains(head, connectionClose)
}

var (
	http11          = []byte("HTTP/1.1 ")
	headerEnd       = []byte("\r\n\r\n")
	connectionClose = []byte("\r\nConnection: close\r\n")
)

// Close hands the connection over, with the bytes of a next request
// already read, when a newer listener is open on the address (the server
// closing it is shutting down, or is about to: a reload has started the
// new config's) and the client was told the connection stays open. Go's
// server (1.26) closes a connection on shutdown when it counts it idle
// (between an answer and the end of the next request's header), and also
// after it read a request as shutdown began, without answering it: either
// way it never serves that request, which the new server does. It also
// closes a connection it answered with keep-alive just as shutdown began.
// Otherwise it closes the connection: no newer listener, or the last
// answer said the connection ends (the client may wait for the close to
// end its body).
func (c *handoffConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.handing {
		return nil
	}
	if to := handoffAddrs.newest(c.from.key); to != nil && to != c.from && c.plain && !c.upgraded && !c.closing && !c.overflow {
		c.handing = true
		if c.reading {
			// Ends the server's wait in Read, which hands the connection
			// over once it has the lock, so after this deadline is set.
			return c.Conn.SetReadDeadline(time.Unix(1, 0))
		}
		// Not from the server's goroutine's Read, which from now on
		// answers net.ErrClosed; not under Shutdown's lock either.
		go c.handOver(bytes.Clone(c.pending))
		return nil
	}
	c.closed = true
	return c.Conn.Close()
}

// SetDeadline, SetReadDeadline and SetWriteDeadline are no-ops once the
// connection is handed over: the old server's goroutine still sets
// deadlines as it winds down, and they are the new server's now.
func (c *handoffConn) SetDeadline(t time.Time) error {
	return c.ifMine(func() error { return c.Conn.SetDeadline(t) })
}

func (c *handoffConn) SetReadDeadline(t time.Time) error {
	return c.ifMine(func() error { return c.Conn.SetReadDeadline(t) })
}

func (c *handoffConn) SetWriteDeadline(t time.Time) error {
	return c.ifMine(func() error { return c.Conn.SetWriteDeadline(t) })
}

func (c *handoffConn) ifMine(f func() error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.handing || c.closed {
		return nil
	}
	return f()
}

// handOver gives the connection, and the bytes of the next request its
// old server read, to the newest listener on its address, or closes it.
func (c *handoffConn) handOver(read []byte) {
	if err := c.Conn.SetReadDeadline(time.Time{}); err != nil {
		c.Conn.Close()
		return
	}
	deliver(c.from.key, func(l *handoffListener) net.Conn {
		return &handoffConn{Conn: c.Conn, from: l, prefix: read, seen: true, plain: true}
	}, c.Conn)
}

// Interface guards.
var (
	_ caddy.ListenerWrapper = (*Handoff)(nil)
	_ caddyfile.Unmarshaler = (*Handoff)(nil)
)
