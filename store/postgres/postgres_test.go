package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/postgres"
	"github.com/earshot-dev/earshot/store/postgres/pgtest"
)

// pg is the package's throwaway PostgreSQL server, started by TestMain.
var pg *pgtest.Server

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, &pg)) }

// openNode opens the database dsn as node id; a cleanup closes it.
func openNode(t *testing.T, dsn, id string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(t.Context(), dsn, &postgres.Options{NodeID: id, SweepAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func job(id, account string, kind store.Kind, status store.Status, created time.Time) *store.Job {
	return &store.Job{ID: id, Account: account, Kind: kind, Status: status, CreatedAt: created}
}

func TestSchemaVersion(t *testing.T) {
	dsn := pg.NewDatabase(t)
	a := openNode(t, dsn, "a")
	if v, err := a.SchemaVersion(); err != nil || v != postgres.SchemaVersion() || v < 1 {
		t.Fatalf("SchemaVersion = %d, %v; want %d", v, err, postgres.SchemaVersion())
	}
	// A second node on a migrated database changes nothing.
	b := openNode(t, dsn, "b")
	if v, err := b.SchemaVersion(); err != nil || v != postgres.SchemaVersion() {
		t.Fatalf("second open: SchemaVersion = %d, %v", v, err)
	}
	// A database written by a newer earshot is refused.
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), "UPDATE schema_version SET version = $1", postgres.SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	if db, err := postgres.Open(t.Context(), dsn, nil); !errors.Is(err, store.ErrSchemaTooNew) {
		if db != nil {
			db.Close()
		}
		t.Fatalf("Open on a newer schema = %v, want ErrSchemaTooNew", err)
	}
}

// TestNodesStartTogether: nodes migrating an empty database at once
// migrate it once (the advisory lock), and all start.
func TestNodesStartTogether(t *testing.T) {
	dsn := pg.NewDatabase(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			db, err := postgres.Open(t.Context(), dsn, &postgres.Options{NodeID: fmt.Sprint(i)})
			if err == nil {
				db.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

func TestOpenUnreachable(t *testing.T) {
	start := time.Now()
	_, err := postgres.Open(t.Context(), "postgres://postgres@127.0.0.1:1/x?sslmode=disable", &postgres.Options{Timeout: 2 * time.Second})
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Open on a closed port = %v, want ErrUnavailable", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Open took %s, want within its timeout", d)
	}
	if _, err := postgres.Open(t.Context(), "postgres://u:secretpw@[::1", nil); err == nil || !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Open(malformed dsn) = %v, want ErrInvalid", err)
	} else if strings.Contains(err.Error(), "secretpw") {
		t.Errorf("error shows the password: %v", err)
	}
}

// TestNodesShareState: what one node writes, another reads at once; a key
// revoked on one node is refused on the other.
func TestNodesShareState(t *testing.T) {
	dsn := pg.NewDatabase(t)
	a, b := openNode(t, dsn, "a"), openNode(t, dsn, "b")
	secret, k, err := a.CreateKey("acme", store.KeyGrant{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.Authenticate(secret); err != nil || got.ID != k.ID {
		t.Fatalf("key created on a, on b: %+v, %v", got, err)
	}
	if err := b.RevokeKey(k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(secret); !errors.Is(err, store.ErrUnauthorized) {
		t.Errorf("key revoked on b still works on a: %v", err)
	}
	if _, err := a.WriteBlob("upload-1", strings.NewReader("audio"), 0); err != nil {
		t.Fatal(err)
	}
	r, err := b.OpenBlob("upload-1")
	if err != nil {
		t.Fatalf("blob written on a, on b: %v", err)
	}
	r.Close()
	sa, _ := a.CallbackSecret("acme")
	sb, _ := b.CallbackSecret("acme")
	if string(sa) != string(sb) {
		t.Error("nodes sign callbacks with different secrets")
	}
}

// TestClaimsAcrossNodes: nodes claiming from one queue at once never take
// the same job, nor the same delivery.
func TestClaimsAcrossNodes(t *testing.T) {
	dsn := pg.NewDatabase(t)
	nodes := []*postgres.DB{openNode(t, dsn, "a"), openNode(t, dsn, "b"), openNode(t, dsn, "c")}
	t0 := time.Now()
	const n = 60
	for i := range n {
		if err := nodes[0].CreateJob(job(fmt.Sprint("j", i), fmt.Sprint("acc", i%3), store.KindPreRecorded, store.StatusQueued, t0.Add(time.Duration(i)))); err != nil {
			t.Fatal(err)
		}
		if err := nodes[0].EnqueueDelivery(&store.Delivery{ID: fmt.Sprint("d", i), URL: "http://x/"}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	jobs, dels := map[string]int{}, map[string]int{}
	byNode := map[string]int{}
	var wg sync.WaitGroup
	for _, db := range nodes {
		for range 2 {
			wg.Go(func() {
				last := ""
				for {
					j, err := db.ClaimNextAfter(store.KindPreRecorded, last)
					if errors.Is(err, store.ErrEmpty) {
						break
					}
					if err != nil {
						t.Error(err)
						return
					}
					last = j.Account
					mu.Lock()
					jobs[j.ID]++
					byNode[db.NodeID()]++
					mu.Unlock()
				}
				for {
					ds, err := db.ClaimDeliveries(time.Now(), 3)
					if err != nil {
						t.Error(err)
						return
					}
					if len(ds) == 0 {
						return
					}
					mu.Lock()
					for _, d := range ds {
						dels[d.ID]++
					}
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if len(jobs) != n || len(dels) != n {
		t.Fatalf("claimed %d jobs and %d deliveries, want %d each", len(jobs), len(dels), n)
	}
	for id, c := range jobs {
		if c != 1 {
			t.Errorf("job %s claimed %d times", id, c)
		}
	}
	for id, c := range dels {
		if c != 1 {
			t.Errorf("delivery %s claimed %d times", id, c)
		}
	}
	t.Logf("claims per node: %v", byNode)
}

// TestRecoverOwnNode: a node's Recover requeues only the jobs it claimed
// and reports only the live sessions it ran.
func TestRecoverOwnNode(t *testing.T) {
	dsn := pg.NewDatabase(t)
	a, b := openNode(t, dsn, "a"), openNode(t, dsn, "b")
	t0 := time.Now()
	for i, db := range []*postgres.DB{a, b} {
		id := db.NodeID()
		if err := db.CreateJob(job("pre-"+id, "acme", store.KindPreRecorded, store.StatusQueued, t0.Add(time.Duration(i)))); err != nil {
			t.Fatal(err)
		}
		if j, err := db.ClaimNext(store.KindPreRecorded); err != nil || j.ID != "pre-"+id {
			t.Fatalf("node %s claimed %v, %v", id, j, err)
		}
		if err := db.CreateJob(job("live-"+id, "acme", store.KindLive, store.StatusProcessing, t0)); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := a.Recover(store.RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Requeued, []string{"pre-a"}) || !slices.Equal(rep.Live, []string{"live-a"}) {
		t.Errorf("node a's Recover = %+v, want only its own jobs", rep)
	}
	if j, _ := b.Job("pre-b"); j.Status != store.StatusProcessing {
		t.Errorf("b's claimed job after a's Recover: %s", j.Status)
	}
	if err := a.Check(); err != nil {
		t.Error(err)
	}
}

// TestBlobRemovedWhileRead: a reader of a blob removed meanwhile ends with
// ErrNotFound, not with short data passed off as complete.
func TestBlobRemovedWhileRead(t *testing.T) {
	db := openNode(t, pg.NewDatabase(t), "a")
	data := make([]byte, 3*postgres.ChunkSize)
	if _, err := db.WriteBlob("b", bytes.NewReader(data), 0); err != nil {
		t.Fatal(err)
	}
	r, err := db.OpenBlob("b")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]byte, postgres.ChunkSize)
	if _, err := r.Read(buf); err != nil {
		t.Fatal(err)
	}
	if err := db.RemoveBlob("b"); err != nil {
		t.Fatal(err)
	}
	var rerr error
	for rerr == nil {
		_, rerr = r.Read(buf)
	}
	if !errors.Is(rerr, store.ErrNotFound) {
		t.Errorf("read after removal = %v, want ErrNotFound", rerr)
	}
}

// TestWatchQueue: a job queued on one node wakes the watcher of another.
func TestWatchQueue(t *testing.T) {
	dsn := pg.NewDatabase(t)
	a, b := openNode(t, dsn, "a"), openNode(t, dsn, "b")
	woke := make(chan struct{}, 16)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- a.WatchQueue(ctx, func() {
			select {
			case woke <- struct{}{}:
			default:
			}
		})
	}()
	deadline := time.After(30 * time.Second)
	select { // the first call says it is listening
	case <-woke:
	case <-deadline:
		t.Fatal("WatchQueue never connected")
	}
	if err := b.CreateJob(job("live", "acme", store.KindLive, store.StatusQueued, time.Now())); err != nil {
		t.Fatal(err)
	}
	if err := b.CreateJob(job("q", "acme", store.KindPreRecorded, store.StatusQueued, time.Now())); err != nil {
		t.Fatal(err)
	}
	select {
	case <-woke:
	case <-deadline:
		t.Fatal("a job queued on b did not wake a's watcher")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("WatchQueue = %v, want nil after cancel", err)
	}
}

// TestLeases: a job whose node stopped renewing its lease goes back to the
// queue (keeping its attempts) and another node finishes it; a renewed
// lease keeps the job its node's.
func TestLeases(t *testing.T) {
	dsn := pg.NewDatabase(t)
	open := func(id string, lease time.Duration) *postgres.DB {
		db, err := postgres.Open(t.Context(), dsn, &postgres.Options{NodeID: id, JobLease: lease})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	dead := open("a", time.Nanosecond) // its leases end as they are taken
	b := open("b", time.Hour)
	t0 := time.Now()
	for i, id := range []string{"j1", "j2"} {
		if err := b.CreateJob(job(id, "acme", store.KindPreRecorded, store.StatusQueued, t0.Add(time.Duration(i)))); err != nil {
			t.Fatal(err)
		}
	}
	if j, err := dead.ClaimNext(store.KindPreRecorded); err != nil || j.ID != "j1" {
		t.Fatalf("a claimed %v, %v", j, err)
	}
	if j, err := b.ClaimNext(store.KindPreRecorded); err != nil || j.ID != "j2" {
		t.Fatalf("b claimed %v, %v", j, err)
	}
	ids, err := b.ReclaimExpired()
	if err != nil || !slices.Equal(ids, []string{"j1"}) {
		t.Fatalf("ReclaimExpired = %v, %v; want a's j1 only", ids, err)
	}
	j, err := b.ClaimNext(store.KindPreRecorded)
	if err != nil || j.ID != "j1" || j.Attempts != 2 {
		t.Fatalf("b's claim after the reclaim = %+v, %v; want j1, attempt 2", j, err)
	}
	if n, err := b.RenewLeases(); err != nil || n != 2 {
		t.Errorf("RenewLeases = %d, %v; want b's 2 jobs", n, err)
	}
	// Node a comes back with a real lease and renews before anyone reclaims.
	a := open("a", time.Hour)
	if err := a.CreateJob(job("j3", "acme", store.KindPreRecorded, store.StatusQueued, t0.Add(3))); err != nil {
		t.Fatal(err)
	}
	if _, err := dead.ClaimNext(store.KindPreRecorded); err != nil {
		t.Fatal(err)
	}
	if n, err := a.RenewLeases(); err != nil || n != 1 {
		t.Fatalf("a's RenewLeases = %d, %v; want 1", n, err)
	}
	if ids, err := b.ReclaimExpired(); err != nil || len(ids) != 0 {
		t.Errorf("ReclaimExpired after a renewed = %v, %v; want none", ids, err)
	}
	if err := b.Check(); err != nil {
		t.Error(err)
	}
}

// TestBatchPassLeases: a batch pass is leased to the node that claimed it
// like a pre-recorded job; when that node stops renewing, another node
// requeues the pass (keeping its attempts) and runs it, and a node's
// Recover puts back only the passes it was running.
func TestBatchPassLeases(t *testing.T) {
	dsn := pg.NewDatabase(t)
	open := func(id string, lease time.Duration) *postgres.DB {
		db, err := postgres.Open(t.Context(), dsn, &postgres.Options{NodeID: id, JobLease: lease})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	dead := open("a", time.Nanosecond) // its leases end as they are taken
	b := open("b", time.Hour)
	t0 := time.Now()
	for i, id := range []string{"l1", "l2"} {
		j := job(id, "acme", store.KindLive, store.StatusDone, t0.Add(time.Duration(i)))
		j.BatchPass = store.BatchPassQueued
		if err := b.CreateJob(j); err != nil {
			t.Fatal(err)
		}
	}
	if j, err := dead.ClaimBatchPass(); err != nil || j.ID != "l1" {
		t.Fatalf("a claimed %v, %v", j, err)
	}
	if j, err := b.ClaimBatchPass(); err != nil || j.ID != "l2" {
		t.Fatalf("b claimed %v, %v", j, err)
	}
	if n, err := b.RenewLeases(); err != nil || n != 1 {
		t.Errorf("b's RenewLeases = %d, %v; want its one batch pass", n, err)
	}
	ids, err := b.ReclaimExpired()
	if err != nil || !slices.Equal(ids, []string{"l1"}) {
		t.Fatalf("ReclaimExpired = %v, %v; want a's l1 only", ids, err)
	}
	j, err := b.ClaimBatchPass()
	if err != nil || j.ID != "l1" || j.Attempts != 2 || j.BatchPass != store.BatchPassRunning || j.Status != store.StatusDone {
		t.Fatalf("b's claim after the reclaim = %+v, %v; want l1 running, attempt 2, still done", j, err)
	}
	// a restarts: nothing of b's is its to put back.
	a := open("a", time.Hour)
	if rep, err := a.Recover(store.RecoverOptions{}); err != nil || len(rep.BatchPasses) != 0 {
		t.Fatalf("a's Recover = %+v, %v; want no batch pass (b runs both)", rep, err)
	}
	if rep, err := b.Recover(store.RecoverOptions{Crashed: true}); err != nil || !slices.Equal(rep.BatchPasses, []string{"l1", "l2"}) {
		t.Fatalf("b's Recover = %+v, %v; want l1 and l2 requeued", rep, err)
	}
	if n, err := a.PendingBatchPasses(); err != nil || n != 2 {
		t.Errorf("PendingBatchPasses = %d, %v; want 2", n, err)
	}
	if err := b.Check(); err != nil {
		t.Error(err)
	}
}

// TestServerRestart: while PostgreSQL restarts, calls fail with
// ErrUnavailable (bounded by Options.Timeout, never a hang); afterwards the
// same store works again without being reopened, and the queue watcher
// reconnects by itself.
func TestServerRestart(t *testing.T) {
	db, err := postgres.Open(t.Context(), pg.NewDatabase(t), &postgres.Options{NodeID: "a", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, _, err := db.CreateKey("acme", store.KeyGrant{}); err != nil {
		t.Fatal(err)
	}
	woke := make(chan struct{}, 16)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go db.WatchQueue(ctx, func() {
		select {
		case woke <- struct{}{}:
		default:
		}
	})
	<-woke // listening
	if err := pg.Restart(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for failed := 0; ; failed++ {
		start := time.Now()
		_, err := db.Keys()
		if err == nil {
			t.Logf("%d calls failed after the restart, then the store worked again", failed)
			break
		}
		if !errors.Is(err, store.ErrUnavailable) {
			t.Fatalf("Keys during the restart = %v, want ErrUnavailable", err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("a failing call took %s, over its 5s timeout", d)
		}
		if time.Now().After(deadline) {
			t.Fatalf("store still failing 30s after the restart: %v", err)
		}
	}
	// The watcher is back: a queued job wakes it (a reconnect also calls it once).
	for len(woke) > 0 {
		<-woke
	}
	if err := db.CreateJob(job("after", "acme", store.KindPreRecorded, store.StatusQueued, time.Now())); err != nil {
		t.Fatal(err)
	}
	select {
	case <-woke:
	case <-time.After(30 * time.Second):
		t.Fatal("the queue watcher did not come back after the restart")
	}
}

// TestHeartbeat: each node's heartbeat replaces its row; Nodes lists every
// node by id with the age of its last beat on the database's clock.
func TestHeartbeat(t *testing.T) {
	dsn := pg.NewDatabase(t)
	var dbs []*postgres.DB
	for _, id := range []string{"b", "a"} {
		db, err := postgres.Open(t.Context(), dsn, &postgres.Options{NodeID: id})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs = append(dbs, db)
	}
	for i, db := range dbs {
		for free := range 2 {
			if err := db.Heartbeat(store.Node{ID: "ignored", AdvertiseURL: "http://x", LiveCapacity: 4, LiveFree: free + i, RunningJobs: 1}); err != nil {
				t.Fatal(err)
			}
		}
	}
	ns, err := dbs[0].Nodes()
	if err != nil || len(ns) != 2 || ns[0].ID != "a" || ns[1].ID != "b" {
		t.Fatalf("Nodes = %+v, %v; want a then b", ns, err)
	}
	if a, b := ns[0], ns[1]; a.LiveFree != 2 || b.LiveFree != 1 || a.LiveCapacity != 4 || a.RunningJobs != 1 ||
		a.AdvertiseURL != "http://x" || a.LastSeen.IsZero() || a.Age < 0 || a.Age > time.Minute {
		t.Errorf("Nodes = %+v; want each node's last beat", ns)
	}
}
