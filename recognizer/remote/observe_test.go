package remote

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/earshot-dev/earshot/recognizer"
)

// TestObserverAndBreakerState: every request is reported once with its
// outcome and attempts, and BreakerState follows the breaker.
func TestObserverAndBreakerState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig("")
		cfg.Name = "gpu"
		cfg.BreakerFailures = 5
		cfg.BreakerCooldown = time.Minute
		var mode atomic.Value
		mode.Store("ok")
		e, _ := newPipeEngine(t, cfg, func(w http.ResponseWriter, r *http.Request, rec *received) {
			switch mode.Load() {
			case "fail":
				http.Error(w, "cuda error", 500)
			case "garbage":
				w.Write([]byte(`{"text": "half`))
			default:
				goodReply(w, r, rec)
			}
		})
		var mu sync.Mutex
		var stats []RequestStat
		e.observer = func(s RequestStat) {
			mu.Lock()
			stats = append(stats, s)
			mu.Unlock()
		}
		pcm := make([]int16, 8000)
		steps := []struct {
			mode     string
			outcome  string
			attempts int
			breaker  string
		}{
			{"ok", OutcomeOK, 1, "closed"},
			{"garbage", OutcomeBadResponse, 1, "closed"},
			{"fail", OutcomeUnavailable, 3, "closed"},
			{"fail", OutcomeUnavailable, 2, "open"}, // the fifth failed attempt opens it
			{"ok", OutcomeCircuitOpen, 0, "open"},
		}
		for i, s := range steps {
			mode.Store(s.mode)
			finishOne(t, e, pcm)
			mu.Lock()
			got := stats
			mu.Unlock()
			if len(got) != i+1 {
				t.Fatalf("step %d: %d stats, want %d", i, len(got), i+1)
			}
			st := got[i]
			if st.Engine != "gpu" || st.Action != "transcribe" || st.Outcome != s.outcome || st.Attempts != s.attempts {
				t.Errorf("step %d: %+v, want outcome %s after %d attempts", i, st, s.outcome, s.attempts)
			}
			if b := e.BreakerState(); b != s.breaker {
				t.Errorf("step %d: breaker %s, want %s", i, b, s.breaker)
			}
		}
		wait(cfg.BreakerCooldown)
		if b := e.BreakerState(); b != "half-open" {
			t.Errorf("after the cooldown: breaker %s, want half-open", b)
		}
	})
}

// TestDecodeOneUtterance: Decode sends exactly the audio it is given, in
// one request, dropping what was written before.
func TestDecodeOneUtterance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, si := newPipeEngine(t, testConfig(""), goodReply)
		rs, err := e.NewStream(t.Context(), recognizer.StreamOptions{Language: "en"})
		if err != nil {
			t.Fatal(err)
		}
		st := rs.(*Stream)
		defer st.Close()
		st.Write(make([]int16, 3200))
		u, err := st.Decode(make([]int16, 12000))
		if err != nil || u.Text != "forward" || u.End != 0.75 {
			t.Fatalf("Decode: %+v %v", u, err)
		}
		reqs := si.requests()
		if len(reqs) != 1 || len(reqs[0].PCM) != 12000 {
			t.Fatalf("%d requests, first with %d samples; want one of 12000", len(reqs), len(reqs[0].PCM))
		}
		if u, err := st.Decode(make([]int16, 100)); err != nil || len(u.Words) != 0 || si.count() != 1 {
			t.Errorf("short Decode: %+v %v, %d requests", u, err, si.count())
		}
	})
}
