package commitlog

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Redis is a Store shared by every replica on the same Redis: a table's
// record is one list (LPUSH, LTRIM to MaxPerTable, EXPIRE to TTL in one
// transaction), so on a Redis Cluster it lives on its own key's slot.
type Redis struct {
	client redis.UniversalClient
	prefix string
}

// NewRedis uses client (owned by the caller) with keys under prefix.
func NewRedis(client redis.UniversalClient, prefix string) *Redis {
	return &Redis{client: client, prefix: prefix}
}

// Add implements Store.
func (s *Redis) Add(ctx context.Context, t Table, e Entry) error {
	raw, err := json.Marshal(e)
	if err != nil {
		return err
	}
	k := s.prefix + key(t)
	_, err = s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.LPush(ctx, k, raw)
		p.LTrim(ctx, k, 0, MaxPerTable-1)
		p.Expire(ctx, k, TTL)
		return nil
	})
	return err
}

// List implements Store.
func (s *Redis) List(ctx context.Context, t Table) ([]Entry, error) {
	raws, err := s.client.LRange(ctx, s.prefix+key(t), 0, MaxPerTable-1).Result()
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(raws))
	for _, raw := range raws {
		var e Entry
		if err := json.Unmarshal([]byte(raw), &e); err != nil {
			return nil, fmt.Errorf("commit record of %s: %w", t.Name, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// Shared implements Store: every replica on this Redis sees the same.
func (*Redis) Shared() bool { return true }
