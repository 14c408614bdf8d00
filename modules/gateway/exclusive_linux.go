//go:build linux

package gateway

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

const socketTableReadable = true

// systemListenSockets asks the kernel with sock_diag (what `ss` uses;
// readable by any user, and under the shipped systemd unit, whose
// ProcSubset=pid hides /proc/net), and reads /proc/net/tcp{,6} when
// netlink is refused.
func systemListenSockets() ([]listenSocket, error) {
	socks, err := diagListenSockets()
	if err == nil {
		return socks, nil
	}
	socks, perr := procListenSockets()
	if perr != nil {
		return nil, fmt.Errorf("sock_diag: %v; %w", err, perr)
	}
	return socks, nil
}

func diagListenSockets() ([]listenSocket, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	// A dump is answered at once; the timeout only keeps a start from
	// hanging on a kernel that never answers.
	tv := unix.NsecToTimeval(int64(5 * time.Second))
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return nil, err
	}
	var out []listenSocket
	for _, family := range []uint8{unix.AF_INET, unix.AF_INET6} {
		socks, err := diagDump(fd, family)
		if err != nil {
			return nil, err
		}
		out = append(out, socks...)
	}
	return out, nil
}

// The sizes of struct inet_diag_req_v2 and struct inet_diag_msg
// (linux/inet_diag.h), and where inet_diag_msg's fields are.
const (
	diagReqLen   = 56
	diagMsgLen   = 72
	diagSport    = 4  // id.idiag_sport, big-endian
	diagSrc      = 8  // id.idiag_src, 16 bytes (IPv4: the first 4)
	diagInode    = 68 // idiag_inode
	tcpListenBit = 1 << 10
)

// diagDump lists the family's TCP sockets in the LISTEN state.
func diagDump(fd int, family uint8) ([]listenSocket, error) {
	req := make([]byte, unix.SizeofNlMsghdr+diagReqLen)
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	ne.PutUint32(req[8:], 1) // sequence
	body := req[unix.SizeofNlMsghdr:]
	body[0], body[1] = family, unix.IPPROTO_TCP
	ne.PutUint32(body[4:], tcpListenBit) // idiag_states
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, err
	}
	var out []listenSocket
	buf := make([]byte, 64<<10)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return nil, err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return out, nil
			case unix.NLMSG_ERROR:
				if len(m.Data) >= 4 {
					if errno := int32(ne.Uint32(m.Data)); errno != 0 {
						return nil, syscall.Errno(-errno)
					}
				}
				return nil, errors.New("sock_diag: error answer")
			}
			if len(m.Data) < diagMsgLen {
				return nil, errors.New("sock_diag: short answer")
			}
			out = append(out, diagSocket(m.Data))
		}
	}
}

func diagSocket(d []byte) listenSocket {
	ip := make(net.IP, net.IPv6len)
	if d[0] == unix.AF_INET {
		ip = net.IP(d[diagSrc : diagSrc+4]).To16()
	} else {
		copy(ip, d[diagSrc:diagSrc+16])
	}
	return listenSocket{ip: ip, port: int(binary.BigEndian.Uint16(d[diagSport:])),
		inode: uint64(binary.NativeEndian.Uint32(d[diagInode:]))}
}
