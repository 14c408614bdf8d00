package gateway

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// Caddy binds every TCP listener with SO_REUSEPORT, so that a config
// reload can bind the new config's listeners before the old config closes
// its own. The kernel lets any other process of the same user do the
// same: a second lakegate started on a running one's addresses does not
// fail, both serve, and connections are split between them. The app
// refuses that at Start: an address this process listens on (its admin
// endpoint, bound before the apps start, and the HTTP servers' listeners)
// or is about to listen on (the HTTP servers' addresses, when the http app
// starts after this one) must have no listening socket that this process
// does not hold. A reload re-binds the same addresses in the same process:
// those sockets are this process's, so reloads are not refused.
//
// Linux only: the listening sockets of the process's network namespace
// (the scope of a port) are read with sock_diag (or /proc/net/tcp{,6}),
// this process's own from /proc/self/fd. Elsewhere the check is skipped.

// listenSocket is a TCP socket in the LISTEN state.
type listenSocket struct {
	ip    net.IP // 16 bytes; IPv4 as IPv4-mapped
	port  int
	inode uint64
}

// overlaps reports whether connections to one socket's address could be
// accepted by the other: the same port and the same IP, or either on the
// unspecified address (0.0.0.0 or ::).
func (s listenSocket) overlaps(o listenSocket) bool {
	return s.port == o.port && (s.ip.IsUnspecified() || o.ip.IsUnspecified() || s.ip.Equal(o.ip))
}

func (s listenSocket) String() string { return net.JoinHostPort(s.ip.String(), strconv.Itoa(s.port)) }

// procRoot is where the kernel's process information is mounted
// (a variable for tests).
var procRoot = "/proc"

// checkSoleListener returns an error naming an address that another
// process listens on among the ones this process listens on and want.
//
// This process's sockets are read before the listening ones: a reload
// closes the old admin endpoint's socket while the new config starts, and
// a socket closed after it was listed as ours is still ours, while one
// closed before is no longer listening. A socket that seems another's is
// looked for among ours again before it is reported.
func checkSoleListener(want []listenSocket) error {
	if !socketTableReadable {
		return nil // not Linux: nothing to read the sockets with
	}
	own, err := ownSocketInodes()
	if err != nil {
		return fmt.Errorf("checking that no other process serves this one's addresses: %w", err)
	}
	all, err := listeningSockets()
	if err != nil {
		return fmt.Errorf("checking that no other process serves this one's addresses: %w", err)
	}
	for _, s := range all {
		if own[s.inode] {
			want = append(want, s)
		}
	}
	for _, w := range want {
		for _, s := range all {
			if !own[s.inode] && s.overlaps(w) && !isOwnSocket(s.inode) {
				return sharedAddressError(w, s)
			}
		}
	}
	return nil
}

// isOwnSocket reads this process's sockets again, for one opened since
// they were first read.
func isOwnSocket(inode uint64) bool {
	own, err := ownSocketInodes()
	return err == nil && own[inode]
}

func sharedAddressError(mine, other listenSocket) error {
	who := "another process"
	if pid := socketOwner(other.inode); pid != 0 {
		who += " (pid " + strconv.Itoa(pid) + ")"
	}
	return fmt.Errorf("%s already listens on %s: stop it, or give this gateway other addresses "+
		"(the listen address and the `admin` option); a second process would share the port with it "+
		"(SO_REUSEPORT) and serve part of its connections", who, addressLabel(mine, other))
}

// addressLabel is the address as the operator configured it, and the
// other's when it differs (0.0.0.0:8181 against 127.0.0.1:8181).
func addressLabel(mine, other listenSocket) string {
	if mine.ip.Equal(other.ip) {
		return mine.String()
	}
	return mine.String() + " (it listens on " + other.String() + ")"
}

// listeningSockets reads the TCP sockets in the LISTEN state of the
// process's network namespace (a variable for tests).
var listeningSockets = systemListenSockets

// procListenSockets reads them from /proc/net/tcp{,6} (hidden from a
// systemd unit with ProcSubset=pid: see exclusive_linux.go).
func procListenSockets() ([]listenSocket, error) {
	var all []listenSocket
	for _, name := range []string{"tcp", "tcp6"} {
		f, err := os.Open(filepath.Join(procRoot, "net", name))
		if errors.Is(err, fs.ErrNotExist) && name == "tcp6" {
			continue // a kernel without IPv6
		}
		if err != nil {
			return nil, err
		}
		socks, err := parseProcNetTCP(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", f.Name(), err)
		}
		all = append(all, socks...)
	}
	return all, nil
}

// tcpListen is the kernel's code for the LISTEN state in /proc/net/tcp.
const tcpListen = "0A"

// parseProcNetTCP reads the listening sockets of /proc/net/tcp or tcp6:
// a header line, then "sl local_address rem_address st ... uid timeout
// inode ...", the local address as hex IP (in the kernel's byte order,
// 32-bit words little-endian) and hex port.
func parseProcNetTCP(r io.Reader) ([]listenSocket, error) {
	var out []listenSocket
	sc := bufio.NewScanner(r)
	sc.Scan() // the header
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != tcpListen {
			continue
		}
		s, err := parseListenLine(f[1], f[9])
		if err != nil {
			return nil, fmt.Errorf("%q: %w", sc.Text(), err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

func parseListenLine(local, inode string) (listenSocket, error) {
	hexIP, hexPort, ok := strings.Cut(local, ":")
	if !ok {
		return listenSocket{}, errors.New("no port in the local address")
	}
	raw, err := hex.DecodeString(hexIP)
	if err != nil || (len(raw) != net.IPv4len && len(raw) != net.IPv6len) {
		return listenSocket{}, errors.New("bad local address")
	}
	for i := 0; i < len(raw); i += 4 { // each 32-bit word is little-endian
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return listenSocket{}, errors.New("bad port")
	}
	ino, err := strconv.ParseUint(inode, 10, 64)
	if err != nil {
		return listenSocket{}, errors.New("bad inode")
	}
	return listenSocket{ip: net.IP(raw).To16(), port: int(port), inode: ino}, nil
}

// ownSocketInodes is the inodes of the sockets this process holds.
func ownSocketInodes() (map[uint64]bool, error) {
	return socketInodes(filepath.Join(procRoot, "self", "fd"))
}

func socketInodes(fdDir string) (map[uint64]bool, error) {
	entries, err := os.ReadDir(fdDir)
	if err != nil {
		return nil, err
	}
	out := make(map[uint64]bool, len(entries))
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join(fdDir, e.Name()))
		if err != nil {
			continue // closed since the listing
		}
		if ino, ok := strings.CutPrefix(target, "socket:["); ok {
			if n, err := strconv.ParseUint(strings.TrimSuffix(ino, "]"), 10, 64); err == nil {
				out[n] = true
			}
		}
	}
	return out, nil
}

// socketOwner is a process holding the socket, or 0 when none can be
// read (another user's processes are not readable): only for the error.
func socketOwner(inode uint64) int {
	procs, err := os.ReadDir(procRoot)
	if err != nil {
		return 0
	}
	self := os.Getpid()
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == self {
			continue
		}
		if held, err := socketInodes(filepath.Join(procRoot, p.Name(), "fd")); err == nil && held[inode] {
			return pid
		}
	}
	return 0
}

// httpListenAddrs is the TCP addresses the http app's servers listen on
// (port ranges expanded; Unix sockets and inherited file descriptors,
// which SO_REUSEPORT does not apply to, left out). A host name is
// resolved as Caddy's bind would.
func httpListenAddrs(app *caddyhttp.App) ([]listenSocket, error) {
	var out []listenSocket
	for _, srv := range app.Servers {
		for _, l := range srv.Listen {
			na, err := caddy.ParseNetworkAddress(l) // placeholders replaced by the http app
			if err != nil {
				return nil, fmt.Errorf("listen address %q: %w", l, err)
			}
			if na.IsUnixNetwork() || na.IsFdNetwork() || !strings.HasPrefix(na.Network, "tcp") {
				continue
			}
			ips, err := hostIPs(na.Host)
			if err != nil {
				return nil, fmt.Errorf("listen address %q: %w", l, err)
			}
			for off := uint(0); off < na.PortRangeSize(); off++ {
				for _, ip := range ips {
					out = append(out, listenSocket{ip: ip, port: int(na.StartPort + off)})
				}
			}
		}
	}
	return out, nil
}

func hostIPs(host string) ([]net.IP, error) {
	if host == "" {
		return []net.IP{net.IPv6unspecified}, nil
	}
	if ip := net.ParseIP(host); ip != nil {
		return []net.IP{ip.To16()}, nil
	}
	return net.LookupIP(host)
}

// checkAddresses is the app's Start check (see above).
func (a *App) checkAddresses() error {
	var want []listenSocket
	if app, err := a.ctx.AppIfConfigured("http"); err == nil {
		if want, err = httpListenAddrs(app.(*caddyhttp.App)); err != nil {
			return err
		}
	}
	return checkSoleListener(want)
}
