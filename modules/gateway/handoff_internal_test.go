package gateway

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

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
