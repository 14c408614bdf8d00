//go:build !linux

package gateway

// socketTableReadable: no sock_diag nor /proc/net outside Linux, so
// checkSoleListener is skipped.
const socketTableReadable = false

func systemListenSockets() ([]listenSocket, error) { return nil, nil }
