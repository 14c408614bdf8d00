package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a Store shared by every gateway replica using the same Redis.
// Claims are SET NX with a TTL; owner-conditional changes run as Lua
// scripts so a replica can only touch the claim it holds.
//
// A record is one key, and every script reads and writes only KEYS[1]:
// on a Redis Cluster each record lives on the node of its own key's slot
// and needs no hash tag. Keep it so: a script that touches a second key
// must tag both alike, or the cluster refuses it (CROSSSLOT). The key
// names are unchanged from before clusters were supported, so replicas
// of two versions share records during a rolling upgrade (renamed keys
// would hide a claim from the other version, and a retried commit could
// apply twice).
type Redis struct {
	client redis.UniversalClient
	prefix string
}

// NewRedis uses client (owned by the caller) with keys under prefix.
func NewRedis(client redis.UniversalClient, prefix string) *Redis {
	return &Redis{client: client, prefix: prefix}
}

func (s *Redis) k(key string) string { return s.prefix + key }

func unavailable(err error) error { return fmt.Errorf("%w: %v", ErrUnavailable, err) }

// Claim implements Store.
func (s *Redis) Claim(ctx context.Context, key string, rec Record, lease time.Duration) (Record, bool, error) {
	raw, err := json.Marshal(rec)
	if err != nil {
		return Record{}, false, err
	}
	ok, err := s.client.SetNX(ctx, s.k(key), raw, lease).Result()
	if err != nil {
		return Record{}, false, unavailable(err)
	}
	if ok {
		return rec, true, nil
	}
	cur, found, err := s.Get(ctx, key)
	if err != nil {
		return Record{}, false, err
	}
	if !found { // expired between SETNX and GET: try once more
		return s.Claim(ctx, key, rec, lease)
	}
	return cur, false, nil
}

// Get implements Store.
func (s *Redis) Get(ctx context.Context, key string) (Record, bool, error) {
	raw, err := s.client.Get(ctx, s.k(key)).Bytes()
	if errors.Is(err, redis.Nil) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, unavailable(err)
	}
	var rec Record
	if err := json.Unmarshal(raw, &rec); err != nil {
		return Record{}, false, fmt.Errorf("corrupt replay record %s: %w", key, err)
	}
	return rec, true, nil
}

// ownerIs matches the owner field of the stored JSON record.
const ownerIs = `local cur = redis.call("GET", KEYS[1])
if not cur then return 0 end
local ok, rec = pcall(cjson.decode, cur)
if not ok or rec["owner"] ~= ARGV[1] then return 0 end
`

var (
	// A sent claim keeps its lifetime TTL; only its lease_until moves.
	extendScript = redis.NewScript(ownerIs + `if rec["sent"] then
  rec["lease_until"] = tonumber(ARGV[3])
  redis.call("SET", KEYS[1], cjson.encode(rec), "KEEPTTL")
  return 1
end
return redis.call("PEXPIRE", KEYS[1], ARGV[2])`)
	markSentScript = redis.NewScript(ownerIs + `if rec["final"] then return 0 end
rec["sent"] = true
rec["lease_until"] = tonumber(ARGV[2])
redis.call("SET", KEYS[1], cjson.encode(rec), "PX", ARGV[3])
return 1`)
	// A claim whose lease ran out with nobody retaking it is still
	// finalized: the request did run, and its outcome must be replayed.
	finalizeScript = redis.NewScript(`local cur = redis.call("GET", KEYS[1])
if cur then
  local ok, rec = pcall(cjson.decode, cur)
  if not ok or rec["owner"] ~= ARGV[1] then return 0 end
end
redis.call("SET", KEYS[1], ARGV[2], "PX", ARGV[3])
return 1`)
	releaseScript = redis.NewScript(ownerIs + `return redis.call("DEL", KEYS[1])`)
	// Only a lapsed sent claim changes hands; its TTL (the key's lifetime)
	// stays. The record is returned either way, as the caller needs it.
	takeOverScript = redis.NewScript(`local cur = redis.call("GET", KEYS[1])
if not cur then return {0, false} end
local ok, rec = pcall(cjson.decode, cur)
if not ok then return {0, cur} end
local now = tonumber(ARGV[3])
if not rec["sent"] or rec["final"] or (tonumber(rec["lease_until"]) or 0) >= now then return {0, cur} end
rec["owner"] = ARGV[1]
rec["lease_until"] = now + tonumber(ARGV[2])
local out = cjson.encode(rec)
redis.call("SET", KEYS[1], out, "KEEPTTL")
return {1, out}`)
)

// TakeOver implements Store.
func (s *Redis) TakeOver(ctx context.Context, key, owner string, lease time.Duration) (Record, bool, error) {
	res, err := takeOverScript.Run(ctx, s.client, []string{s.k(key)}, owner, lease.Milliseconds(),
		time.Now().UnixMilli()).Slice()
	if err != nil {
		return Record{}, false, unavailable(err)
	}
	if len(res) != 2 {
		return Record{}, false, fmt.Errorf("replay record %s: unexpected take-over answer", key)
	}
	raw, _ := res[1].(string)
	if raw == "" {
		return Record{}, false, nil
	}
	var rec Record
	if err := json.Unmarshal([]byte(raw), &rec); err != nil {
		return Record{}, false, fmt.Errorf("corrupt replay record %s: %w", key, err)
	}
	won, _ := res[0].(int64)
	return rec, won == 1, nil
}

// Extend implements Store.
func (s *Redis) Extend(ctx context.Context, key, owner string, lease time.Duration) error {
	return s.run(ctx, extendScript, key, owner, lease.Milliseconds(), time.Now().Add(lease).UnixMilli())
}

// MarkSent implements Store.
func (s *Redis) MarkSent(ctx context.Context, key, owner string, lease, lifetime time.Duration) error {
	n, err := markSentScript.Run(ctx, s.client, []string{s.k(key)}, owner,
		time.Now().Add(lease).UnixMilli(), lifetime.Milliseconds()).Int()
	switch {
	case err != nil && !errors.Is(err, redis.Nil):
		return unavailable(err)
	case n != 1:
		return ErrClaimLost
	}
	return nil
}

// Finalize implements Store.
func (s *Redis) Finalize(ctx context.Context, key, owner string, rec Record, ttl time.Duration) error {
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return s.run(ctx, finalizeScript, key, owner, raw, ttl.Milliseconds())
}

// Release implements Store.
func (s *Redis) Release(ctx context.Context, key, owner string) error {
	return s.run(ctx, releaseScript, key, owner)
}

func (s *Redis) run(ctx context.Context, script *redis.Script, key string, args ...any) error {
	if err := script.Run(ctx, s.client, []string{s.k(key)}, args...).Err(); err != nil && !errors.Is(err, redis.Nil) {
		return unavailable(err)
	}
	return nil
}

// Close does nothing: the client belongs to the caller.
func (s *Redis) Close() error { return nil }
