package daemon

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest/memstore"
)

// slowRecovery is a store whose Recover waits until release is closed: a
// data dir whose recovery takes long.
type slowRecovery struct {
	*memstore.Store
	recovering chan struct{} // closed when Recover is entered
	release    chan struct{}
}

func (s slowRecovery) Recover(o store.RecoverOptions) (store.RecoverReport, error) {
	close(s.recovering)
	<-s.release
	return s.Store.Recover(o)
}

// TestNotReadyWhileRecovering: until Run has recovered what the last run
// left, Ready says so (the operations door answers /readyz "not ready"
// during a long recovery); once started, it is ready. Before, Ready looked
// only at the store and the engine and said ready mid-recovery.
func TestNotReadyWhileRecovering(t *testing.T) {
	cfg := testConfig(t)
	db := slowRecovery{memstore.New(), make(chan struct{}), make(chan struct{})}
	d := New(cfg, db, testPipeline(t, cfg), slog.New(slog.DiscardHandler))
	t.Cleanup(func() { d.Close() })
	if err := d.Ready(); !errors.Is(err, ErrStarting) {
		t.Errorf("before Run: Ready %v, want ErrStarting", err)
	}
	ctx, stop := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() { ran <- d.Run(ctx) }()
	<-db.recovering
	if err := d.Ready(); !errors.Is(err, ErrStarting) {
		t.Errorf("while recovering: Ready %v, want ErrStarting", err)
	}
	close(db.release)
	select {
	case <-d.Started():
	case err := <-ran:
		t.Fatalf("Run ended before it started: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("not started within a minute of the recovery's end")
	}
	if err := d.Ready(); err != nil {
		t.Errorf("started: Ready %v", err)
	}
	stop()
	if err := <-ran; err != nil {
		t.Errorf("Run: %v", err)
	}
}
