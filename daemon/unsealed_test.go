package daemon

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store/storetest/memstore"
)

// countingForever is a store whose count of what is stored in clear
// (unsealedCounter) lasts until its context ends: a data dir of many
// calls stored before encryption was turned on.
type countingForever struct {
	*memstore.Store
	counting chan struct{} // closed when the count has begun
}

func (c countingForever) Unsealed(ctx context.Context) (int, int, int, error) {
	close(c.counting)
	<-ctx.Done()
	return 0, 0, 0, ctx.Err()
}

// lines is a slog handler's record of messages, with a channel that
// receives each.
type lines struct {
	mu  sync.Mutex
	got []string
	ch  chan string
}

func (l *lines) Enabled(context.Context, slog.Level) bool { return true }
func (l *lines) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.got = append(l.got, r.Message)
	l.mu.Unlock()
	select {
	case l.ch <- r.Message:
	default:
	}
	return nil
}
func (l *lines) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *lines) WithGroup(string) slog.Handler      { return l }

// TestUnsealedCountBesideTheDoors: counting what a sealed store holds in
// clear (each audio file without a key opened) does not hold the start
// back, and a shutdown ends it. Before, New counted before returning, so
// a daemon on a data dir of many clear calls started only once every file
// had been opened.
func TestUnsealedCountBesideTheDoors(t *testing.T) {
	cfg := testConfig(t)
	db := countingForever{memstore.New(), make(chan struct{})}
	pl := testPipeline(t, cfg)
	log := &lines{ch: make(chan string, 64)}
	built := make(chan *Daemon)
	go func() { built <- New(cfg, db, pl, slog.New(log)) }()
	var d *Daemon
	select {
	case d = <-built:
	case <-db.counting:
		t.Fatal("New counts what is stored in clear before the daemon starts")
	}
	t.Cleanup(func() { d.Close() })
	ctx, stop := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() { ran <- d.Run(ctx) }()
	timeout := time.After(time.Minute)
	for started := false; !started; {
		select {
		case m := <-log.ch:
			started = m == "daemon started"
		case err := <-ran:
			t.Fatalf("Run ended before it started: %v", err)
		case <-timeout:
			t.Fatal("no \"daemon started\" within a minute")
		}
	}
	<-db.counting // the count runs beside the doors
	stop()
	select {
	case err := <-ran:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Run did not end within a minute of its context: the count holds the shutdown")
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	for _, m := range log.got {
		if strings.Contains(m, "in clear") {
			t.Errorf("a cut count logged %q", m)
		}
	}
}
