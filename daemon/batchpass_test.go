package daemon

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/store"
)

// waitBatchPass polls the store until job id's batch pass is in state,
// failing t after a minute.
func waitBatchPass(t *testing.T, d *Daemon, id string, state store.BatchPassState) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; {
		j, err := d.db.Job(id)
		if err == nil && j.BatchPass == state {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("batch pass of %s not %v within a minute (job %+v, %v)", id, state, j, err)
		}
		time.Sleep(5 * time.Millisecond) // polling the store, not settling
	}
}

// TestShutdownCutsBatchPass: a shutdown cuts a running batch pass at once
// and puts it back in the queue, however long its workers stage may last:
// the pass improves a record its client already has and runs again after
// the restart. Before, the workers stage waited for it (up to
// shutdown.workers, 15 s by default), and the pass ended done before the
// process could exit.
func TestShutdownCutsBatchPass(t *testing.T) {
	d, _ := newTestDaemon(t, func(c *Config) { c.Shutdown.Workers = time.Minute })
	wav, err := os.ReadFile(speech)
	if err != nil {
		t.Fatal(err)
	}
	pcm := wav[44:]
	opts, err := params.DecodeLiveOptions(map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := d.OpenLive(t.Context(), ingest.LiveRequest{Account: "acme", Options: opts,
		Format: media.Format{Encoding: media.LinearPCM, SampleRate: 16000, BitDepth: 16, Channels: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for range 4 { // 8 s of speech: a pass of several decoder calls
		if err := sess.Write(t.Context(), pcm); err != nil {
			t.Fatal(err)
		}
	}
	if err := sess.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitBatchPass(t, d, sess.ID(), store.BatchPassQueued)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var wg sync.WaitGroup
	d.workersDone = make(chan struct{})
	wg.Go(func() {
		defer close(d.workersDone)
		d.runWorker(ctx, 0)
	})
	outboxCtx, stopOutbox := context.WithCancel(t.Context())
	defer stopOutbox()
	wg.Go(func() { d.outbox.Run(outboxCtx) }) // the outbox stage waits for it
	waitBatchPass(t, d, sess.ID(), store.BatchPassRunning)
	start := time.Now()
	d.shutdown(stoppers{live: func() {}, work: cancel, outbox: stopOutbox})
	wg.Wait()
	t.Logf("shutdown with a batch pass running: %s", time.Since(start).Round(time.Millisecond))
	j, err := d.db.Job(sess.ID())
	if err != nil {
		t.Fatal(err)
	}
	if j.BatchPass != store.BatchPassQueued || j.Status != store.StatusDone {
		t.Errorf("after the shutdown: batch pass %v, job %s; want the pass back in the queue, the job done", j.BatchPass, j.Status)
	}
}
