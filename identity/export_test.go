package identity

import "time"

// SetRefetchGap lets rotation tests skip the 10s JWKS refetch rate limit.
func SetRefetchGap(j *JWT, d time.Duration) {
	j.remote.mu.Lock()
	defer j.remote.mu.Unlock()
	j.remote.minGap = d
}

// ForgetProcessKeys drops the ephemeral issuer keys, as a new process
// starts without them: tests use it to stand for another replica.
func ForgetProcessKeys() { processKeys.Clear() }

// DummyCost is the bcrypt cost an unknown client id is compared at (0:
// no dummy comparison).
func DummyCost(i *Issuer) int {
	if i.dummy == nil {
		return 0
	}
	cost, _ := parseBcrypt(string(i.dummy))
	return cost
}

// SetClock makes a's claims checks and its verified-token cache read now
// instead of the time (a is a JWT or an Issuer's Authenticator).
func SetClock(a Authenticator, now func() time.Time) {
	switch a := a.(type) {
	case *JWT:
		a.v.now = now
	case *verifier:
		a.now = now
	default:
		panic("SetClock: not a JWT verifier")
	}
}
