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
// "lakegate.redis", each kind of line at most once per redisLogEvery
// (with the count of those left out); lakegate's own answers and the
// status page already say that the store is unavailable.
func init() { redis.SetLogger(&redisLog{last: map[string]redisLogSeen{}}) }

const redisLogEvery = 10 * time.Second

type redisLog struct {
	mu   sync.Mutex
	last map[string]redisLogSeen // by format string: one kind of line
}

type redisLogSeen struct {
	at      time.Time
	dropped int
}

func (l *redisLog) Printf(_ context.Context, format string, v ...any) {
	dropped, ok := l.admit(format, time.Now())
	if !ok {
		return
	}
	fields := []zap.Field{}
	if dropped > 0 {
		fields = append(fields, zap.Int("suppressed", dropped))
	}
	// caddy.Log() at each line: the logger follows config reloads.
	caddy.Log().Named("lakegate.redis").Warn(strings.TrimSpace(fmt.Sprintf(format, v...)), fields...)
}

// admit says whether a line of this format is written now, and how many
// were left out since the last one written.
func (l *redisLog) admit(format string, now time.Time) (dropped int, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := l.last[format]
	if !seen.at.IsZero() && now.Sub(seen.at) < redisLogEvery {
		seen.dropped++
		l.last[format] = seen
		return 0, false
	}
	l.last[format] = redisLogSeen{at: now}
	return seen.dropped, true
}
