package gateway

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// go-redis logs its connection troubles (a failed dial, a pool that
// cannot reach Sentinel) with the standard library's logger: plain text
// lines in the middle of Caddy's JSON log, once per attempt while Redis is
// down. They go to Caddy's log instead, as warnings of the logger
// "lakegate.redis", each kind of line at most once per sampledLogEvery
// (with the count of those left out); lakegate's own answers and the
// status page already say that the store is unavailable.
func init() { redis.SetLogger(redisLog{newSampledLog("lakegate.redis")}) }

const sampledLogEvery = 10 * time.Second

type redisLog struct{ *sampledLog }

func (l redisLog) Printf(_ context.Context, format string, v ...any) {
	l.warn(format, strings.TrimSpace(fmt.Sprintf(format, v...)))
}

// sampledLog writes a library's repeated complaints to Caddy's log as
// warnings of one logger, each kind of line at most once per
// sampledLogEvery.
type sampledLog struct {
	name string
	mu   sync.Mutex
	last map[string]sampledSeen // by kind of line
}

type sampledSeen struct {
	at      time.Time
	dropped int
}

func newSampledLog(name string) *sampledLog {
	return &sampledLog{name: name, last: map[string]sampledSeen{}}
}

// warn writes msg, a line of this kind, unless one was written lately.
func (l *sampledLog) warn(kind, msg string) {
	dropped, ok := l.admit(kind, time.Now())
	if !ok {
		return
	}
	fields := []zap.Field{}
	if dropped > 0 {
		fields = append(fields, zap.Int("suppressed", dropped))
	}
	// caddy.Log() at each line: the logger follows config reloads.
	caddy.Log().Named(l.name).Warn(msg, fields...)
}

// admit says whether a line of this kind is written now, and how many
// were left out since the last one written.
func (l *sampledLog) admit(kind string, now time.Time) (dropped int, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := l.last[kind]
	if !seen.at.IsZero() && now.Sub(seen.at) < sampledLogEvery {
		seen.dropped++
		l.last[kind] = seen
		return 0, false
	}
	l.last[kind] = sampledSeen{at: now}
	return seen.dropped, true
}
