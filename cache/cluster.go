package cache

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// What differs on a Redis Cluster. Every key the cache writes stands
// alone (a table is one hash, written with HSET and EXPIRE of that one
// key), so no key needs a hash tag; what does not follow a key is the
// bus and the prefix scan.

// eachMaster runs fn on the one Redis, or on every master of a Redis
// Cluster: SCAN walks one node's keys, and PING on a cluster asks a
// random node, which would call a cluster with a dead master healthy.
func (c *Cache) eachMaster(ctx context.Context, fn func(context.Context, redis.Cmdable) error) error {
	cc, ok := c.rdb.(*redis.ClusterClient)
	if !ok {
		return fn(ctx, c.rdb)
	}
	return cc.ForEachMaster(ctx, func(ctx context.Context, master *redis.Client) error {
		return fn(ctx, master)
	})
}

// bus is where this cache publishes. On a Redis Cluster a message
// published on any node reaches every subscriber, but PUBLISH counts
// only the subscribers of the node it ran on, and publish waits for that
// many confirmations. go-redis holds each replica's subscription on the
// master of the slot of its first channel, the invalidation channel (see
// New), and sends a PUBLISH (no key) to a random
// node: there it would count none, and a write would return before the
// other replicas dropped the table. So it goes to that master.
func (c *Cache) bus(ctx context.Context) (redis.Cmdable, error) {
	cc, ok := c.rdb.(*redis.ClusterClient)
	if !ok {
		return c.rdb, nil
	}
	return cc.MasterForKey(ctx, c.channel())
}

// ack confirms message msgID to the replica that sent it, through the
// node its subscription is on (skipping a hop across the cluster bus).
func (c *Cache) ack(to, msgID string) error {
	ctx := context.Background()
	bus, err := c.bus(ctx)
	if err != nil {
		return err
	}
	return bus.Publish(ctx, c.ackChannel(to), msgID).Err()
}
