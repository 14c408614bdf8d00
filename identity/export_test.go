package identity

import "time"

// SetRefetchGap lets rotation tests skip the 10s JWKS refetch rate limit.
func SetRefetchGap(j *JWT, d time.Duration) {
	j.remote.mu.Lock()
	defer j.remote.mu.Unlock()
	j.remote.minGap = d
}
