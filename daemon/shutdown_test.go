package daemon

import (
	"log/slog"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store/bolt"

	"github.com/earshot-dev/earshot/store"
)

// TestRequeueOnlyOwnClaim: a shutdown puts back in the queue only a job
// this node still holds the claim of. Before, a node that stalled past
// cluster.job_lease (another node claimed the job again, Attempts 2) and
// then shut down requeued the other node's run from under it (that node
// then dropped its result as a lost claim), because requeue checked only
// that the job was processing.
func TestRequeueOnlyOwnClaim(t *testing.T) {
	db, err := bolt.Open(t.TempDir(), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	j := &store.Job{ID: "j1", Account: "acme", Kind: store.KindPreRecorded, Status: store.StatusProcessing,
		Attempts: 2, RequestID: "req-j1", CreatedAt: time.Now()}
	if err := db.CreateJob(j); err != nil {
		t.Fatal(err)
	}
	d := &Daemon{db: db, log: slog.New(slog.DiscardHandler)}
	status := func() store.Status {
		got, err := db.Job("j1")
		if err != nil {
			t.Fatal(err)
		}
		return got.Status
	}

	d.requeue(d.log, "j1", 1) // the first claim's run, stalled
	if s := status(); s != store.StatusProcessing {
		t.Fatalf("requeue by a stale claim: status %s, want processing", s)
	}
	d.requeue(d.log, "j1", 0) // a download's or batch pass's entry: no claim
	if s := status(); s != store.StatusProcessing {
		t.Fatalf("requeue without a claim: status %s, want processing", s)
	}
	d.requeue(d.log, "j1", 2)
	if s := status(); s != store.StatusQueued {
		t.Fatalf("requeue by the claim's run: status %s, want queued", s)
	}
}
