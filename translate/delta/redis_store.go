package delta

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisStore is the Store replicas share: staging tables as JSON under
// staged:<id> with a location index staged-at:<location>, and update
// locks as SET NX keys with a random token.
//
// No command, script or transaction touches two keys, so it runs on a
// Redis Cluster as is, with no hash tags: a staging table and its index
// are looked up by id and by location alone, so no tag could be derived
// from what both lookups know, short of one tag for every staging table
// (one slot, one node, for all of them).
type RedisStore struct {
	rdb    redis.UniversalClient
	prefix string
}

// NewRedisStore keeps the store in rdb under keys starting with prefix.
func NewRedisStore(rdb redis.UniversalClient, prefix string) *RedisStore {
	return &RedisStore{rdb: rdb, prefix: prefix}
}

// lockTTL bounds how long a crashed replica's lock blocks a table.
const lockTTL = 30 * time.Second

func (s *RedisStore) PutStaged(ctx context.Context, st Staged, ttl time.Duration) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	// The record first, then its index: the index never names a record
	// that was not written, and a failure between the two fails the
	// stage (the client asks again) while the lone record expires.
	if err := s.rdb.Set(ctx, s.prefix+"staged:"+st.TableID, b, ttl).Err(); err != nil {
		return err
	}
	return s.rdb.Set(ctx, s.prefix+"staged-at:"+st.Location, st.TableID, ttl).Err()
}

func (s *RedisStore) StagedByID(ctx context.Context, id string) (*Staged, error) {
	b, err := s.rdb.Get(ctx, s.prefix+"staged:"+id).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st Staged
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("staging table %s: %w", id, err)
	}
	return &st, nil
}

func (s *RedisStore) StagedByLocation(ctx context.Context, loc string) (*Staged, error) {
	id, err := s.rdb.Get(ctx, s.prefix+"staged-at:"+loc).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return s.StagedByID(ctx, id)
}

// DeleteStaged drops the index first: a create at the location then no
// longer finds the staging table, even if the record's delete fails.
func (s *RedisStore) DeleteStaged(ctx context.Context, st Staged) error {
	if err := s.rdb.Del(ctx, s.prefix+"staged-at:"+st.Location).Err(); err != nil {
		return err
	}
	return s.rdb.Del(ctx, s.prefix+"staged:"+st.TableID).Err()
}

// unlockScript deletes the lock only if this holder still owns it.
var unlockScript = redis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0`)

func (s *RedisStore) Lock(ctx context.Context, key string) (func(), error) {
	var tok [16]byte
	_, _ = rand.Read(tok[:])
	token, k := hex.EncodeToString(tok[:]), s.prefix+"lock:"+key
	for {
		ok, err := s.rdb.SetNX(ctx, k, token, lockTTL).Result()
		if err != nil {
			return nil, err
		}
		if ok {
			return func() { _ = unlockScript.Run(context.WithoutCancel(ctx), s.rdb, []string{k}, token).Err() }, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
