//go:build !linux

package gateway

import "net"

// shareSocket: steering new connections to one socket of a SO_REUSEPORT
// group is Linux's; elsewhere each config accepts on its own socket, and
// connections queued on one as a reload closes it are reset.
func shareSocket(net.Listener) []net.Listener { return nil }
