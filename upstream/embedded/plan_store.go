package embedded

// Scan planning: the in-memory store of plans and plan-tasks.

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

// planStore keeps completed plans (for fetchPlanningResult) and their
// plan-tasks (for fetchScanTasks) for planTTL, within maxStoredPlans and
// maxStoredBytes; the oldest plans are evicted first.
type planStore struct {
	mu    sync.Mutex
	bytes int
	plans map[string]*storedPlan
	tasks map[string]storedTask
}

type storedPlan struct {
	table    string
	location string
	expires  time.Time
	result   encodedTasks
	taskIDs  []string
	size     int
}

type storedTask struct {
	planID string
	tasks  encodedTasks
}

func newPlanStore() *planStore {
	return &planStore{plans: map[string]*storedPlan{}, tasks: map[string]storedTask{}}
}

// add stores a plan of one or more envelopes and returns its id and the
// envelope to answer with: one envelope is answered inline, several become
// plan-tasks. stored is false when the plan alone exceeds the store's
// budget; nothing is kept then.
func (s *planStore) add(tableKey, location string, envelopes []encodedTasks) (planID string, inline encodedTasks, stored bool, err error) {
	if planID, err = newToken(); err != nil {
		return "", encodedTasks{}, false, err
	}
	p := &storedPlan{table: tableKey, location: location, expires: time.Now().Add(planTTL)}
	chunks := map[string]encodedTasks{}
	if len(envelopes) == 1 {
		p.result = envelopes[0]
	} else {
		p.result = emptyTasks
		for _, e := range envelopes {
			id, err := newToken()
			if err != nil {
				return "", encodedTasks{}, false, err
			}
			chunks[id] = e
			p.taskIDs = append(p.taskIDs, id)
			p.size += e.size()
		}
		p.result.PlanTasks = p.taskIDs
	}
	p.size += p.result.size()
	return planID, p.result, s.put(planID, p, chunks), nil
}

// put stores p unless it alone exceeds the byte budget.
func (s *planStore) put(planID string, p *storedPlan, chunks map[string]encodedTasks) bool {
	if p.size > maxStoredBytes {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(time.Now())
	for len(s.plans) >= maxStoredPlans || s.bytes+p.size > maxStoredBytes {
		s.evictOldestLocked()
	}
	s.plans[planID] = p
	s.bytes += p.size
	for id, e := range chunks {
		s.tasks[id] = storedTask{planID: planID, tasks: e}
	}
	return true
}

func (s *planStore) plan(tableKey, planID string) (*storedPlan, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(time.Now())
	p, ok := s.plans[planID]
	if !ok || p.table != tableKey {
		return nil, false
	}
	return p, true
}

func (s *planStore) task(tableKey, taskID string) (encodedTasks, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(time.Now())
	t, ok := s.tasks[taskID]
	if !ok || s.plans[t.planID].table != tableKey {
		return encodedTasks{}, false
	}
	return t.tasks, true
}

func (s *planStore) cancel(tableKey, planID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(time.Now())
	p, ok := s.plans[planID]
	if !ok || p.table != tableKey {
		return false
	}
	s.removeLocked(planID)
	return true
}

// expireLocked drops expired plans; the store is small enough (at most
// maxStoredPlans) for a scan on every access.
func (s *planStore) expireLocked(now time.Time) {
	for id, p := range s.plans {
		if !now.Before(p.expires) {
			s.removeLocked(id)
		}
	}
}

func (s *planStore) evictOldestLocked() {
	oldest := ""
	for id, p := range s.plans {
		if oldest == "" || p.expires.Before(s.plans[oldest].expires) {
			oldest = id
		}
	}
	s.removeLocked(oldest)
}

func (s *planStore) removeLocked(planID string) {
	p, ok := s.plans[planID]
	if !ok {
		return
	}
	for _, id := range p.taskIDs {
		delete(s.tasks, id)
	}
	s.bytes -= p.size
	delete(s.plans, planID)
}

// newToken makes plan ids and plan-task handles: random, so they cannot be
// guessed or collide across restarts.
func newToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}
