package remote

import (
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/openai"
)

// finishOne writes pcm to a new stream and finishes it.
func finishOne(t *testing.T, e *Engine, pcm []int16) (recognizer.Utterance, error) {
	t.Helper()
	st, err := e.NewStream(t.Context(), recognizer.StreamOptions{Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Write(pcm); err != nil {
		t.Fatal(err)
	}
	return st.Finish()
}

// goodReply answers with one word over the whole audio.
func goodReply(w http.ResponseWriter, _ *http.Request, rec *received) {
	writeJSON(w, 200, reply("en", transcript{[]string{"forward"}, 0, rec.seconds()}, rec.seconds(), -0.1, []float64{0.9}))
}

func TestFinishErrors(t *testing.T) {
	second := make([]int16, recognizer.SampleRate)
	tests := []struct {
		name    string
		respond func(http.ResponseWriter, *http.Request, *received)
		want    error
		status  int // of the *StatusError, 0 for none
		tries   int // requests the server sees
	}{
		{"malformed json", func(w http.ResponseWriter, _ *http.Request, _ *received) {
			w.Write([]byte(`{"text": "half`))
		}, ErrBadResponse, 0, 1},
		{"plain text format", func(w http.ResponseWriter, _ *http.Request, _ *received) {
			w.Write([]byte(`hello world`))
		}, ErrBadResponse, 0, 1},
		{"json without text", func(w http.ResponseWriter, _ *http.Request, _ *received) {
			writeJSON(w, 200, map[string]any{"result": "hello"})
		}, ErrBadResponse, 0, 1},
		{"400 not retried", func(w http.ResponseWriter, _ *http.Request, _ *received) {
			writeJSON(w, 400, map[string]any{"error": map[string]any{"message": "language xx is not supported", "type": "invalid_request_error"}})
		}, ErrBadResponse, 400, 1},
		{"401 not retried", func(w http.ResponseWriter, _ *http.Request, _ *received) {
			writeJSON(w, 401, map[string]any{"detail": "invalid api key"})
		}, ErrBadResponse, 401, 1},
		{"503 retried then unavailable", func(w http.ResponseWriter, _ *http.Request, _ *received) {
			http.Error(w, "model loading", http.StatusServiceUnavailable)
		}, ErrUnavailable, 503, 3},
		{"429 retried then unavailable", func(w http.ResponseWriter, _ *http.Request, _ *received) {
			writeJSON(w, 429, map[string]any{"error": map[string]any{"message": "rate limited"}})
		}, ErrUnavailable, 429, 3},
		{"connection dropped", func(w http.ResponseWriter, _ *http.Request, _ *received) {
			c, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				c.Close()
			}
		}, ErrUnavailable, 0, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e, si := newPipeEngine(t, testConfig(""), tc.respond)
				_, err := finishOne(t, e, second)
				if !errors.Is(err, tc.want) {
					t.Fatalf("err %v, want %v", err, tc.want)
				}
				var se *StatusError
				if got := errors.As(err, &se); got != (tc.status != 0) || got && se.StatusCode != tc.status {
					t.Errorf("status error %v, want status %d", se, tc.status)
				}
				if si.count() != tc.tries {
					t.Errorf("%d requests, want %d", si.count(), tc.tries)
				}
			})
		})
	}
}

func TestFinishErrorMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, _ := newPipeEngine(t, testConfig(""), func(w http.ResponseWriter, _ *http.Request, _ *received) {
			writeJSON(w, 400, map[string]any{"error": map[string]any{"message": "language xx is not supported"}})
		})
		_, err := finishOne(t, e, make([]int16, 4000))
		var se *StatusError
		if !errors.As(err, &se) || se.Message != "language xx is not supported" {
			t.Errorf("err %v", err)
		}
	})
}

func TestRetryBackoff(t *testing.T) {
	tests := []struct {
		name     string
		failures int
		header   string
		elapsed  time.Duration
	}{
		{"two 500s", 2, "", 200*time.Millisecond + 400*time.Millisecond},
		{"one 429 with retry-after", 1, "3", 3 * time.Second},
		{"retry-after capped", 1, "3600", openai.MaxRetryAfter},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var n atomic.Int32
				e, si := newPipeEngine(t, testConfig(""), func(w http.ResponseWriter, r *http.Request, rec *received) {
					if int(n.Add(1)) <= tc.failures {
						if tc.header != "" {
							w.Header().Set("Retry-After", tc.header)
							http.Error(w, "slow down", http.StatusTooManyRequests)
							return
						}
						http.Error(w, "internal error", 500)
						return
					}
					goodReply(w, r, rec)
				})
				start := time.Now()
				u, err := finishOne(t, e, make([]int16, 8000))
				if err != nil {
					t.Fatal(err)
				}
				if u.Text != "forward" || u.Confidence != 0.9 {
					t.Errorf("utterance %+v", u)
				}
				if got := time.Since(start); got != tc.elapsed {
					t.Errorf("took %v, want %v of backoff", got, tc.elapsed)
				}
				if si.count() != tc.failures+1 {
					t.Errorf("%d requests, want %d", si.count(), tc.failures+1)
				}
			})
		})
	}
}

func TestTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig("")
		cfg.Timeout = 5 * time.Second
		e, si := newPipeEngine(t, cfg, func(w http.ResponseWriter, r *http.Request, rec *received) {
			<-r.Context().Done() // slower than any timeout
		})
		start := time.Now()
		_, err := finishOne(t, e, make([]int16, 8000))
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("err %v, want ErrTimeout", err)
		}
		if got := time.Since(start); got != cfg.Timeout {
			t.Errorf("failed after %v, want %v", got, cfg.Timeout)
		}
		if si.count() != 1 {
			t.Errorf("%d requests: a timeout must not be retried", si.count())
		}
	})
}

func TestCircuitBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig("")
		cfg.BreakerFailures = 5
		cfg.BreakerCooldown = 30 * time.Second
		var healthy atomic.Bool
		e, si := newPipeEngine(t, cfg, func(w http.ResponseWriter, r *http.Request, rec *received) {
			if !healthy.Load() {
				http.Error(w, "cuda error", 500)
				return
			}
			goodReply(w, r, rec)
		})
		pcm := make([]int16, 8000)
		// Two Finish calls of 3 attempts each: the fifth attempt opens it.
		for i := range 2 {
			if _, err := finishOne(t, e, pcm); !errors.Is(err, ErrUnavailable) {
				t.Fatalf("call %d: %v", i, err)
			}
		}
		if si.count() != 5 {
			t.Fatalf("%d attempts, want 5 (the breaker stops the sixth)", si.count())
		}
		// Open: fails fast, no request, no time.
		start := time.Now()
		_, err := finishOne(t, e, pcm)
		if !errors.Is(err, ErrUnavailable) || !errors.Is(err, errCircuitOpen) || time.Since(start) != 0 {
			t.Fatalf("open circuit: %v after %v", err, time.Since(start))
		}
		if _, err := e.Translate(t.Context(), pcm, ""); !errors.Is(err, errCircuitOpen) {
			t.Errorf("translate with open circuit: %v", err)
		}
		if si.count() != 5 {
			t.Errorf("%d requests while open", si.count())
		}
		// After the cooldown one probe goes; it fails and reopens.
		wait(cfg.BreakerCooldown)
		if _, err := finishOne(t, e, pcm); !errors.Is(err, ErrUnavailable) {
			t.Fatal(err)
		}
		if si.count() != 6 {
			t.Fatalf("%d requests, want one probe", si.count())
		}
		if _, err := finishOne(t, e, pcm); !errors.Is(err, errCircuitOpen) {
			t.Fatalf("after failed probe: %v", err)
		}
		// The server recovers: the next probe closes the circuit.
		healthy.Store(true)
		wait(cfg.BreakerCooldown - time.Millisecond)
		if _, err := finishOne(t, e, pcm); !errors.Is(err, errCircuitOpen) {
			t.Fatalf("before the cooldown ends: %v", err)
		}
		wait(time.Millisecond)
		for i := range 3 {
			if u, err := finishOne(t, e, pcm); err != nil || u.Text != "forward" {
				t.Fatalf("recovered, call %d: %+v %v", i, u, err)
			}
		}
		if si.count() != 9 {
			t.Errorf("%d requests, want 9 (6 failed, 3 good)", si.count())
		}
	})
}

func TestServerDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	noLeaks(t)
	cfg := testConfig("http://" + addr + "/v1")
	cfg.Retries = 1
	e, err := New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	_, err = finishOne(t, e, make([]int16, 8000))
	if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrTimeout) || errors.Is(err, ErrBadResponse) {
		t.Errorf("err %v, want ErrUnavailable", err)
	}
}

func TestCapacity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, _ := newPipeEngine(t, testConfig(""), goodReply) // Capacity 2
		var open []recognizer.Stream
		for range 2 {
			st, err := e.NewStream(t.Context(), recognizer.StreamOptions{})
			if err != nil {
				t.Fatal(err)
			}
			open = append(open, st)
		}
		if total, busy := e.Stats(); total != 2 || busy != 2 {
			t.Errorf("stats %d/%d", busy, total)
		}
		// The third waits until its context ends.
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		start := time.Now()
		_, err := e.NewStream(ctx, recognizer.StreamOptions{})
		cancel()
		if !errors.Is(err, recognizer.ErrAtCapacity) || time.Since(start) != time.Second {
			t.Errorf("third stream: %v after %v", err, time.Since(start))
		}
		if _, err := e.Translate(ctx, make([]int16, 8000), ""); !errors.Is(err, recognizer.ErrAtCapacity) {
			t.Errorf("translate at capacity: %v", err)
		}
		// ... or until a stream closes.
		got := make(chan error, 1)
		go func() {
			st, err := e.NewStream(t.Context(), recognizer.StreamOptions{})
			if err == nil {
				st.Close()
			}
			got <- err
		}()
		synctest.Wait()
		select {
		case err := <-got:
			t.Fatalf("third stream did not wait: %v", err)
		default:
		}
		open[0].Close()
		if err := <-got; err != nil {
			t.Errorf("third stream after a close: %v", err)
		}
		// Close wakes waiters with ErrClosed.
		st, _ := e.NewStream(t.Context(), recognizer.StreamOptions{})
		go func() {
			_, err := e.NewStream(t.Context(), recognizer.StreamOptions{})
			got <- err
		}()
		synctest.Wait()
		e.Close()
		if err := <-got; !errors.Is(err, recognizer.ErrClosed) {
			t.Errorf("waiter at close: %v", err)
		}
		if _, err := e.NewStream(t.Context(), recognizer.StreamOptions{}); !errors.Is(err, recognizer.ErrClosed) {
			t.Errorf("new stream after close: %v", err)
		}
		st.Close()
		open[1].Close()
	})
}

func TestLanguages(t *testing.T) {
	cfg := testConfig("http://gpu-box:8000/v1")
	cfg.Languages = []string{"en", "fr"}
	e, err := New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if got := strings.Join(e.Languages(), " "); got != "en fr" || e.Name() != "remote" {
		t.Errorf("languages %q name %q", got, e.Name())
	}
	if _, err := e.NewStream(t.Context(), recognizer.StreamOptions{Language: "de"}); !errors.Is(err, recognizer.ErrLanguage) {
		t.Errorf("unserved language: %v", err)
	}
	all, err := New(testConfig("http://gpu-box:8000/v1"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	if len(all.Languages()) != 99 {
		t.Errorf("%d languages, want SPEC's 99", len(all.Languages()))
	}
}

func TestEngineCloseCancelsRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, si := newPipeEngine(t, testConfig(""), func(w http.ResponseWriter, r *http.Request, _ *received) {
			<-r.Context().Done()
		})
		got := make(chan error, 1)
		go func() {
			_, err := finishOne(t, e, make([]int16, 8000))
			got <- err
		}()
		synctest.Wait()
		if si.count() != 1 {
			t.Fatalf("%d requests", si.count())
		}
		e.Close()
		if err := <-got; !errors.Is(err, recognizer.ErrClosed) {
			t.Errorf("finish during close: %v", err)
		}
	})
}

func TestTranslate(t *testing.T) {
	pcm, words := clip(t, "ls-test-clean-1089-134691-0000.wav")
	cfg := testConfig("")
	cfg.Prompt = "Dedalus"
	e, si := newHTTPEngine(t, cfg, func(w http.ResponseWriter, _ *http.Request, rec *received) {
		// OpenAI's translations answer: segments, no words.
		d := rec.seconds()
		writeJSON(w, 200, map[string]any{
			"task": "translate", "language": "french", "duration": d, "text": strings.Join(words, " "),
			"segments": []map[string]any{{"start": 0.2, "end": d - 0.2, "text": " " + strings.Join(words, " "),
				"avg_logprob": -0.3, "no_speech_prob": 0.02}},
		})
	})
	u, err := e.Translate(t.Context(), pcm, "A story.")
	if err != nil {
		t.Fatal(err)
	}
	rec := si.requests()[0]
	if !strings.HasSuffix(rec.Path, "/v1/audio/translations") || len(rec.PCM) != len(pcm) {
		t.Errorf("request %s with %d samples", rec.Path, len(rec.PCM))
	}
	checkFields(t, rec, map[string][]string{
		"model": {cfg.Model}, "prompt": {"Dedalus A story."}, "response_format": {"verbose_json"},
	})
	if u.Language != "en" || u.Text != strings.Join(words, " ") || len(u.Words) != len(words) {
		t.Fatalf("utterance %+v", u)
	}
	d := float64(len(pcm)) / recognizer.SampleRate
	if u.Start != 0.2 || u.End > d-0.2 || u.End < d-0.5 {
		t.Errorf("span %.3f..%.3f, want words spread over the segment 0.2..%.3f", u.Start, u.End, d-0.2)
	}
	for i := 1; i < len(u.Words); i++ {
		if u.Words[i].Start < u.Words[i-1].End {
			t.Errorf("word %d overlaps the previous", i)
		}
	}
	if math.Abs(u.Confidence-math.Exp(-0.3)) > 1e-9 {
		t.Errorf("confidence %v", u.Confidence)
	}
	if _, err := e.Translate(t.Context(), make([]int16, maxSamples+1), ""); !errors.Is(err, ErrTooLong) {
		t.Errorf("too long: %v", err)
	}
	if u, err := e.Translate(t.Context(), make([]int16, 100), ""); err != nil || len(u.Words) != 0 || si.count() != 1 {
		t.Errorf("short: %+v %v, %d requests", u, err, si.count())
	}
}
