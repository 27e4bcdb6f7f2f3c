package callback_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/callback"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest"
)

// start runs o until the test ends; the channel is closed when Run has
// returned (a failure of Run fails the test).
func start(t *testing.T, o *callback.Outbox) <-chan struct{} {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		if err := o.Run(ctx); err != nil {
			t.Errorf("Run = %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-ran
	})
	return ran
}

func newConfig() callback.Config {
	var c callback.Config
	c.SetDefaults()
	return c
}

// TestShutdownDeliversDue: Shutdown delivers every delivery due, more than
// one batch of them, then Run returns and nothing is left pending.
func TestShutdownDeliversDue(t *testing.T) {
	db := storetest.Open(t)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	const n = 20 // beyond one batch
	for range n {
		if err := db.EnqueueDelivery(&store.Delivery{JobID: "j", Account: "acme", URL: srv.URL, Method: "POST", Body: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	o := callback.New(newConfig(), db, nil)
	ran := start(t, o)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := o.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown = %v, want nil", err)
	}
	select {
	case <-ran:
	default:
		t.Error("Run still running after Shutdown returned")
	}
	if got := hits.Load(); got != n {
		t.Errorf("receiver got %d callbacks, want %d", got, n)
	}
	if p, err := db.PendingDeliveries(); err != nil || p != 0 {
		t.Errorf("pending after Shutdown: %d %v, want 0", p, err)
	}
}

// TestShutdownBounded: a receiver that never answers holds an attempt in
// flight; Shutdown returns its ctx's error when ctx ends, Run has returned,
// and the delivery stays in the store for the next start.
func TestShutdownBounded(t *testing.T) {
	db := storetest.Open(t)
	inFlight := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inFlight <- struct{}{}
		select { // never answers while the test runs
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // before srv.Close
	if err := db.EnqueueDelivery(&store.Delivery{JobID: "j", Account: "acme", URL: srv.URL, Method: "POST", Body: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	cfg := newConfig()
	cfg.Timeout = time.Hour // only Shutdown's bound ends the attempt
	o := callback.New(cfg, db, nil)
	ran := start(t, o)
	<-inFlight
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if err := o.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v, want its ctx's deadline", err)
	}
	select {
	case <-ran:
	default:
		t.Error("Run still running after Shutdown returned")
	}
	if p, err := db.PendingDeliveries(); err != nil || p != 1 {
		t.Errorf("pending after a cut-short Shutdown: %d %v, want the delivery kept", p, err)
	}
}

// TestSigned: every attempt carries the timed signature, which verifies
// under the account's callback secret at the receiver's clock, and the
// body signature unless callbacks.body_signature is false.
func TestSigned(t *testing.T) {
	for _, bodySig := range []bool{true, false} {
		t.Run(fmt.Sprintf("body_signature=%v", bodySig), func(t *testing.T) {
			db := storetest.Open(t)
			got := make(chan http.Header, 1)
			body := []byte(`{"id":"j","event":"transcription.success","payload":{}}`)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				if !bytes.Equal(b, body) {
					t.Errorf("body %q", b)
				}
				got <- r.Header.Clone()
			}))
			t.Cleanup(srv.Close)
			if err := db.EnqueueDelivery(&store.Delivery{JobID: "j", Account: "acme", URL: srv.URL, Method: "POST", Body: body}); err != nil {
				t.Fatal(err)
			}
			cfg := newConfig()
			cfg.BodySignature = &bodySig
			start(t, callback.New(cfg, db, nil))
			h := <-got
			secret, err := db.CallbackSecret("acme")
			if err != nil {
				t.Fatal(err)
			}
			if err := callback.Verify(secret, h.Get(callback.HeaderTimedSignature), body, time.Now(), 0); err != nil {
				t.Errorf("%s %q: %v", callback.HeaderTimedSignature, h.Get(callback.HeaderTimedSignature), err)
			}
			mac := hmac.New(sha256.New, secret)
			mac.Write(body)
			want := ""
			if bodySig {
				want = hex.EncodeToString(mac.Sum(nil))
			}
			if s := h.Get(callback.HeaderSignature); s != want {
				t.Errorf("%s = %q, want %q", callback.HeaderSignature, s, want)
			}
		})
	}
}

// TestRetrySignedAfresh: a retry is signed at its own time, not the first
// attempt's, so a receiver's tolerance bounds the network's delay and not
// the outbox's backoff.
func TestRetrySignedAfresh(t *testing.T) {
	db := storetest.Open(t)
	sigs := make(chan string, 2)
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) > 2 {
			return
		}
		sigs <- r.Header.Get(callback.HeaderTimedSignature)
		if n.Load() == 1 {
			w.WriteHeader(503) // the first attempt
		}
	}))
	t.Cleanup(srv.Close)
	if err := db.EnqueueDelivery(&store.Delivery{JobID: "j", Account: "acme", URL: srv.URL, Method: "POST", Body: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	cfg := newConfig()
	cfg.MinBackoff = 1100 * time.Millisecond // the retry's second differs
	start(t, callback.New(cfg, db, nil))
	first, second := <-sigs, <-sigs
	t1, _, _ := strings.Cut(first, ",")
	t2, _, _ := strings.Cut(second, ",")
	n1, err1 := strconv.ParseInt(strings.TrimPrefix(t1, "t="), 10, 64)
	n2, err2 := strconv.ParseInt(strings.TrimPrefix(t2, "t="), 10, 64)
	if err1 != nil || err2 != nil || n2 <= n1 {
		t.Errorf("retry signed %q after %q: want a later timestamp", second, first)
	}
}
