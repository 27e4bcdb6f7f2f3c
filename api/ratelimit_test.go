package api

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

func TestRateLimiter(t *testing.T) {
	tests := []struct {
		name  string
		rate  float64
		burst int
		// steps: advance the clock by wait, then make n calls on key;
		// want is how many of them are allowed.
		steps []step
	}{
		{"burst then refusals", 2, 5, []step{{0, "a", 8, 5}}},
		{"refill at rate", 2, 5, []step{{0, "a", 5, 5}, {time.Second, "a", 3, 2}, {2 * time.Second, "a", 5, 4}}},
		{"refill caps at burst", 10, 3, []step{{0, "a", 3, 3}, {time.Hour, "a", 5, 3}}},
		{"keys are independent", 1, 2, []step{{0, "a", 4, 2}, {0, "b", 4, 2}, {0, "a", 1, 0}}},
		{"fractional rate", 0.5, 1, []step{{0, "a", 2, 1}, {time.Second, "a", 1, 0}, {time.Second, "a", 1, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := newRateLimiter(tt.rate, tt.burst)
				for i, s := range tt.steps {
					time.Sleep(s.wait) // the bubble's fake clock
					got := 0
					for range s.n {
						if ok, _ := l.allow(s.key); ok {
							got++
						}
					}
					if got != s.want {
						t.Errorf("step %d (%s): %d of %d allowed, want %d", i, s.key, got, s.n, s.want)
					}
				}
			})
		})
	}
}

type step struct {
	wait    time.Duration
	key     string
	n, want int
}

// TestRateLimiterRetryAfter: the wait reported with a refusal is exactly
// when the next token is there: one nanosecond earlier is still refused.
func TestRateLimiterRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newRateLimiter(4, 2)
		l.allow("k")
		l.allow("k")
		ok, wait := l.allow("k")
		if ok || wait != 250*time.Millisecond {
			t.Fatalf("third call: ok %v wait %s, want refused for 250ms", ok, wait)
		}
		time.Sleep(wait - time.Nanosecond)
		if ok, _ := l.allow("k"); ok {
			t.Fatal("allowed before the reported wait")
		}
		time.Sleep(time.Nanosecond)
		if ok, _ := l.allow("k"); !ok {
			t.Fatal("refused after the reported wait")
		}
	})
}

// TestRateLimiterEvictsIdle: buckets of keys that stopped calling are
// dropped once refilled, so memory follows the active keys only.
func TestRateLimiterEvictsIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newRateLimiter(1, 100)
		for i := range 1000 {
			l.allow(fmt.Sprintf("key-%d", i))
		}
		if n := l.size(); n != 1000 {
			t.Fatalf("%d buckets after 1000 keys, want 1000", n)
		}
		time.Sleep(sweepEvery) // each used one token: refilled after 1s
		l.allow("active")
		if n := l.size(); n != 1 {
			t.Errorf("%d buckets after a sweep, want 1 (the active key)", n)
		}
		// A bucket still below burst survives a sweep, keeping its debt.
		for range 100 {
			l.allow("busy")
		}
		time.Sleep(sweepEvery) // busy is back to 60 of 100 tokens
		l.allow("other")
		if n := l.size(); n != 2 {
			t.Errorf("%d buckets, want 2 (busy, other)", n)
		}
		got := 0
		for range 100 {
			if ok, _ := l.allow("busy"); ok {
				got++
			}
		}
		if got != 60 {
			t.Errorf("busy got %d of 100 after 60s at 1/s, want 60", got)
		}
	})
}

func TestRateLimiterOff(t *testing.T) {
	l := newRateLimiter(0, 0)
	for range 1000 {
		if ok, _ := l.allow("k"); !ok {
			t.Fatal("rate 0 refused a call")
		}
	}
}
