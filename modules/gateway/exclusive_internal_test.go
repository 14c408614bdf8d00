package gateway

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const procTCPHeader = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"

// procLine is a /proc/net/tcp{,6} line for a socket on local (the
// kernel's hex form) in state st.
func procLine(local, st string, inode int) string {
	return "   0: " + local + " 00000000:0000 " + st + " 00000000:00000000 00:00000000 00000000  1000        0 " +
		strconv.Itoa(inode) + " 1 0000000000000000 100 0 0 10 0\n"
}

// fakeProc is a /proc with the given sockets: /proc/net/tcp and tcp6
// lines, and which process holds which socket inode (pid 0: this one).
func fakeProc(t *testing.T, tcp, tcp6 string, held map[int][]int) {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "net"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "net", "tcp"), []byte(procTCPHeader+tcp), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "net", "tcp6"), []byte(procTCPHeader+tcp6), 0o644))
	for pid, inodes := range held {
		dir := filepath.Join(root, strconv.Itoa(pid), "fd")
		if pid == 0 {
			dir = filepath.Join(root, "self", "fd")
		}
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for i, ino := range inodes {
			require.NoError(t, os.Symlink("socket:["+strconv.Itoa(ino)+"]", filepath.Join(dir, strconv.Itoa(i+3))))
		}
		require.NoError(t, os.Symlink("/dev/null", filepath.Join(dir, "0")))
	}
	oldRoot, oldList := procRoot, listeningSockets
	procRoot, listeningSockets = root, procListenSockets
	t.Cleanup(func() { procRoot, listeningSockets = oldRoot, oldList })
}

func TestParseProcNetTCP(t *testing.T) {
	socks, err := parseProcNetTCP(strings.NewReader(procTCPHeader +
		procLine("0100007F:1FF5", "0A", 11) + // 127.0.0.1:8181, listening
		procLine("0100007F:1FF5", "01", 12) + // an established connection: left out
		procLine("00000000:07E3", "0A", 13))) // 0.0.0.0:2019
	require.NoError(t, err)
	require.Len(t, socks, 2)
	assert.Equal(t, "127.0.0.1:8181", socks[0].String())
	assert.Equal(t, uint64(11), socks[0].inode)
	assert.Equal(t, "0.0.0.0:2019", socks[1].String())

	socks, err = parseProcNetTCP(strings.NewReader(procTCPHeader +
		procLine("00000000000000000000000001000000:1FF5", "0A", 21) + // [::1]:8181
		procLine("0000000000000000FFFF00000100007F:1FF5", "0A", 22))) // [::ffff:127.0.0.1]:8181
	require.NoError(t, err)
	require.Len(t, socks, 2)
	assert.Equal(t, "[::1]:8181", socks[0].String())
	assert.Equal(t, "127.0.0.1:8181", socks[1].String())

	_, err = parseProcNetTCP(strings.NewReader(procTCPHeader + procLine("7F:1FF5", "0A", 1)))
	assert.ErrorContains(t, err, "bad local address")
}

// An address this process listens on, or is to listen on, is refused
// when a socket it does not hold listens on it, on the unspecified
// address of the port, or is unspecified while the other is specific;
// its own sockets (a reload's old and new listeners) are not.
func TestCheckSoleListener(t *testing.T) {
	loop, any4, any6 := "0100007F", "00000000", "00000000000000000000000000000000"
	port := func(p int) string { return ":" + strings.ToUpper(strconv.FormatInt(int64(p), 16)) }
	want := func(host string, p int) []listenSocket {
		return []listenSocket{{ip: net.ParseIP(host).To16(), port: p}}
	}

	// A reload: the old and the new config's listeners, both this process's.
	fakeProc(t, procLine(loop+port(8181), "0A", 1)+procLine(loop+port(8181), "0A", 2), "", map[int][]int{0: {1, 2}})
	assert.NoError(t, checkSoleListener(nil))
	assert.NoError(t, checkSoleListener(want("127.0.0.2", 8181)), "another IP on the port is another address")

	// Another process on this one's admin address, already bound by it.
	fakeProc(t, procLine(loop+port(2019), "0A", 1)+procLine(loop+port(2019), "0A", 7), "", map[int][]int{0: {1}, 4242: {7}})
	assert.EqualError(t, checkSoleListener(nil), "another process (pid 4242) already listens on 127.0.0.1:2019: "+
		"stop it, or give this gateway other addresses (the listen address and the `admin` option); "+
		"a second process would share the port with it (SO_REUSEPORT) and serve part of its connections")

	// The http app not yet started: its address is wanted, not yet held.
	fakeProc(t, procLine(any4+port(8181), "0A", 7), "", map[int][]int{0: {}, 4242: {7}})
	assert.ErrorContains(t, checkSoleListener(want("127.0.0.1", 8181)),
		"(pid 4242) already listens on 127.0.0.1:8181 (it listens on 0.0.0.0:8181)")
	assert.NoError(t, checkSoleListener(want("127.0.0.1", 8182)))

	// Another user's process: not readable, not named.
	fakeProc(t, "", procLine(any6+port(8181), "0A", 9), map[int][]int{0: {}})
	assert.ErrorContains(t, checkSoleListener(want("::", 8181)), "another process already listens on [::]:8181")
	assert.ErrorContains(t, checkSoleListener(want("127.0.0.1", 8181)), "another process already listens on 127.0.0.1:8181")
}

// sock_diag and /proc/net/tcp list the same listening sockets, among them
// one this test opens, found among this process's own by its inode.
func TestListeningSocketsOfTheKernel(t *testing.T) {
	if !socketTableReadable {
		t.Skip("Linux only")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port

	diag, err := diagListenSockets()
	require.NoError(t, err)
	proc, err := procListenSockets()
	require.NoError(t, err)
	own, err := ownSocketInodes()
	require.NoError(t, err)
	var found []listenSocket
	for _, s := range diag {
		if s.port == port {
			found = append(found, s)
		}
	}
	require.Len(t, found, 1, "sock_diag: %v", diag)
	assert.Equal(t, "127.0.0.1:"+strconv.Itoa(port), found[0].String())
	assert.True(t, own[found[0].inode], "the listener is not among this process's sockets")
	assert.Contains(t, proc, found[0], "/proc/net/tcp does not list it")
	assert.NoError(t, checkSoleListener([]listenSocket{{ip: net.IPv4(127, 0, 0, 1), port: port}}))
}
