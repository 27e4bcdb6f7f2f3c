package api

import (
	"math"
	"sync"
	"time"
)

// sweepEvery is how often (at most) allow drops idle buckets.
const sweepEvery = time.Minute

// rateLimiter is a token bucket per API key: each key may make burst
// requests at once and rate per second after that. A bucket that has
// refilled to burst is the same as no bucket, so idle buckets are dropped
// (at most once a minute, during a call): memory is bounded by the keys
// active in the last minute plus the time to refill, and the map is keyed
// by key ids from the store, never by client data.
type rateLimiter struct {
	rate  float64 // tokens per second, > 0
	burst float64 // bucket size, >= 1

	mu        sync.Mutex
	buckets   map[string]*bucket // guarded by mu: key id → its bucket
	lastSweep time.Time          // guarded by mu
}

type bucket struct {
	tokens float64   // at at
	at     time.Time // last refill
}

// newRateLimiter returns a limiter, or nil (every call allowed) when rate
// is 0.
func newRateLimiter(rate float64, burst int) *rateLimiter {
	if rate <= 0 {
		return nil
	}
	return &rateLimiter{rate: rate, burst: float64(max(burst, 1)), buckets: make(map[string]*bucket)}
}

// allow takes a token from key's bucket. When none is left it reports
// false and how long until one is.
func (l *rateLimiter) allow(key string) (bool, time.Duration) {
	if l == nil {
		return true, 0
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) >= sweepEvery {
		l.sweepLocked(now)
	}
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[key] = b
	}
	b.tokens = min(l.burst, b.tokens+now.Sub(b.at).Seconds()*l.rate)
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := (1 - b.tokens) / l.rate
	return false, time.Duration(math.Ceil(wait * float64(time.Second)))
}

// sweepLocked drops the buckets that have refilled by now.
func (l *rateLimiter) sweepLocked(now time.Time) {
	l.lastSweep = now
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*l.rate >= l.burst {
			delete(l.buckets, k)
		}
	}
}

// size is the number of buckets held (tests).
func (l *rateLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}
