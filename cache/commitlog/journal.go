package commitlog

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// queueSize bounds the commits waiting to be written: a store that
// cannot keep up (a Redis gone) loses records, never slows a commit.
const queueSize = 1024

// writeTimeout bounds one record's write.
const writeTimeout = 2 * time.Second

// Journal writes commit records off the commit's path: Note queues an
// entry (a channel send), and one goroutine writes it to the store. A
// record is lost when the queue is full or the store fails (counted in
// Dropped, logged); the commit itself is never affected.
type Journal struct {
	store   Store
	log     *zap.Logger
	queue   chan noted
	stop    chan struct{}
	stopped sync.WaitGroup
	once    sync.Once
	// Dropped counts records not kept: queue full, or the store failed.
	Dropped atomic.Int64
}

type noted struct {
	table Table
	entry Entry
}

// NewJournal starts a journal writing to store; Close stops it.
func NewJournal(store Store, log *zap.Logger) *Journal {
	if log == nil {
		log = zap.NewNop()
	}
	j := &Journal{store: store, log: log, queue: make(chan noted, queueSize), stop: make(chan struct{})}
	j.stopped.Add(1)
	go j.run()
	return j
}

// Store is where the journal writes, for reading back.
func (j *Journal) Store() Store { return j.store }

// Note queues e for t's record.
func (j *Journal) Note(t Table, e Entry) {
	select {
	case j.queue <- noted{t, e}:
	default:
		j.dropped("the commit record's queue is full")
	}
}

func (j *Journal) run() {
	defer j.stopped.Done()
	for {
		select {
		case n := <-j.queue:
			j.write(n)
		case <-j.stop:
			for { // what was noted before Close is still written
				select {
				case n := <-j.queue:
					j.write(n)
				default:
					return
				}
			}
		}
	}
}

func (j *Journal) write(n noted) {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	if err := j.store.Add(ctx, n.table, n.entry); err != nil {
		j.dropped("writing a commit record failed", zap.Error(err))
	}
}

// dropped counts a lost record and says so, at most once per 1,000.
func (j *Journal) dropped(why string, fields ...zap.Field) {
	if j.Dropped.Add(1)%1000 == 1 {
		j.log.Warn(why+": the catalog browser will not show this commit", append(fields, zap.Int64("dropped", j.Dropped.Load()))...)
	}
}

// Close writes what is queued and stops the journal.
func (j *Journal) Close() error {
	j.once.Do(func() { close(j.stop) })
	j.stopped.Wait()
	return nil
}
