package postgres_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/postgres"
)

// TestPlaceLive: a live session goes to this node while it has room, then
// to the other node with the most free slots that advertises a URL and
// beats; placements racing from every node never overfill a node, and a
// full cluster is ErrNoLiveRoom with nothing stored.
func TestPlaceLive(t *testing.T) {
	dsn := pg.NewDatabase(t)
	a, b, c := openNode(t, dsn, "a"), openNode(t, dsn, "b"), openNode(t, dsn, "c")
	for _, n := range []struct {
		db  *postgres.DB
		url string
		cap int
	}{{a, "http://a", 1}, {b, "http://b", 2}, {c, "", 5}} {
		if err := n.db.Heartbeat(store.Node{AdvertiseURL: n.url, LiveCapacity: n.cap, LiveFree: n.cap}); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Now()
	live := func(i int) *store.Job {
		return job(fmt.Sprintf("live-%02d", i), "acme", store.KindLive, store.StatusQueued, t0.Add(time.Duration(i)))
	}
	self := store.Node{AdvertiseURL: "http://a", LiveCapacity: 1}
	n, err := a.PlaceLive(live(0), self, true, time.Minute)
	if err != nil || n.ID != "a" {
		t.Fatalf("first placement from a: %+v, %v; want a itself", n, err)
	}
	if node, err := b.JobNode("live-00"); err != nil || node != "a" {
		t.Fatalf("JobNode = %q, %v", node, err)
	}
	// a is full; c advertises no URL, so b (2 slots) takes the next two,
	// whichever node places them, as they race.
	var wg sync.WaitGroup
	got := make([]store.Node, 3)
	errs := make([]error, 3)
	for i, db := range []*postgres.DB{a, b, c} {
		wg.Go(func() {
			me := store.Node{LiveCapacity: 0}
			if db == a {
				me = self
			}
			got[i], errs[i] = db.PlaceLive(live(1+i), me, true, time.Minute)
		})
	}
	wg.Wait()
	placed, full := 0, 0
	for i := range got {
		switch {
		case errs[i] == nil && got[i].ID == "b" && got[i].AdvertiseURL == "http://b":
			placed++
		case errors.Is(errs[i], store.ErrNoLiveRoom):
			full++
			if _, err := a.Job(live(1 + i).ID); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("refused placement stored its job: %v", err)
			}
		default:
			t.Errorf("placement %d: %+v, %v", i, got[i], errs[i])
		}
	}
	if placed != 2 || full != 1 {
		t.Fatalf("%d placed on b, %d refused; want 2 and 1", placed, full)
	}
	// A node not heard from within staleAfter is no candidate.
	if _, err := b.UpdateJob("live-00", func(j *store.Job) ([]*store.Delivery, error) {
		j.Status = store.StatusDone
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if n, err := c.PlaceLive(live(9), store.Node{}, true, time.Nanosecond); !errors.Is(err, store.ErrNoLiveRoom) {
		t.Fatalf("placement with every other node stale: %+v, %v", n, err)
	}
	if n, err := c.PlaceLive(live(9), store.Node{}, true, time.Minute); err != nil || n.ID != "a" {
		t.Fatalf("placement after a's session ended: %+v, %v; want a", n, err)
	}
	// Without remote only this node is a candidate.
	if n, err := b.PlaceLive(live(10), store.Node{LiveCapacity: 3}, false, time.Minute); err != nil || n.ID != "b" {
		t.Fatalf("local placement on b: %+v, %v", n, err)
	}
}

// TestTakeOrphanLive: the live jobs of a node that stopped beating are
// taken once by one survivor; a beating node's jobs and ended jobs stay.
func TestTakeOrphanLive(t *testing.T) {
	dsn := pg.NewDatabase(t)
	a, b, c := openNode(t, dsn, "a"), openNode(t, dsn, "b"), openNode(t, dsn, "c")
	t0 := time.Now()
	for i, st := range []store.Status{store.StatusQueued, store.StatusProcessing, store.StatusDone} {
		if err := a.CreateJob(job(fmt.Sprint("a-", i), "acme", store.KindLive, st, t0.Add(time.Duration(i)))); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.CreateJob(job("b-0", "acme", store.KindLive, store.StatusProcessing, t0)); err != nil {
		t.Fatal(err)
	}
	for _, db := range []*postgres.DB{a, b, c} {
		if err := db.Heartbeat(store.Node{LiveCapacity: 4}); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := c.TakeOrphanLive(time.Minute); err != nil || len(got) != 0 {
		t.Fatalf("orphans while every node beats: %+v, %v", got, err)
	}
	// Only a stops: b and c beat again just before the take with a short bound.
	for deadline := time.Now().Add(time.Minute); ; {
		ns, err := c.Nodes()
		if err != nil {
			t.Fatal(err)
		}
		if ns[0].ID == "a" && ns[0].Age >= 2*time.Second {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a's heartbeat never aged: %+v", ns)
		}
		time.Sleep(50 * time.Millisecond) // polling the database's clock
	}
	for _, db := range []*postgres.DB{b, c} {
		if err := db.Heartbeat(store.Node{LiveCapacity: 4}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	res := make([][]store.Orphan, 2)
	for i, db := range []*postgres.DB{b, c} {
		wg.Go(func() {
			var err error
			if res[i], err = db.TakeOrphanLive(time.Second); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	taken := map[string]string{}
	for i, os := range res {
		for _, o := range os {
			if _, dup := taken[o.Job.ID]; dup || o.Node != "a" {
				t.Errorf("orphan %s (of %s) taken twice or from the wrong node", o.Job.ID, o.Node)
			}
			taken[o.Job.ID] = []string{"b", "c"}[i]
		}
	}
	if len(taken) != 2 || taken["a-0"] == "" || taken["a-1"] == "" {
		t.Fatalf("taken %v; want a-0 and a-1", taken)
	}
	for id, by := range taken {
		if node, err := a.JobNode(id); err != nil || node != by {
			t.Errorf("%s now on %q (%v), want %s", id, node, err, by)
		}
	}
}

// TestAppendBlob: appended parts read back as one blob, chunk by chunk,
// with its size; the head is patched in place only at its own length.
func TestAppendBlob(t *testing.T) {
	db := openNode(t, pg.NewDatabase(t), "a")
	head := []byte("HEAD----")
	want := append([]byte{}, head...)
	if n, err := db.AppendBlob("rec.wav", 0, head, bytes.Repeat([]byte{1}, 1000)); err != nil || n != 1008 {
		t.Fatalf("first append: %d, %v", n, err)
	}
	want = append(want, bytes.Repeat([]byte{1}, 1000)...)
	if n, err := db.AppendBlob("rec.wav", 1008, nil, bytes.Repeat([]byte{2}, 70)); err != nil || n != 1078 {
		t.Fatalf("second append: %d, %v", n, err)
	}
	want = append(want, bytes.Repeat([]byte{2}, 70)...)
	if _, err := db.AppendBlob("rec.wav", 1078, make([]byte, postgres.ChunkSize+1)); !errors.Is(err, store.ErrTooLarge) {
		t.Fatalf("oversized part: %v", err)
	}
	if n, err := db.AppendBlob("rec.wav", 1008, []byte{3}); !errors.Is(err, store.ErrExists) || n != 0 {
		t.Fatalf("append at a stale size: %d, %v; want ErrExists", n, err)
	}
	if err := db.PatchBlobHead("rec.wav", []byte("LONGER HEAD")); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("patch of another length: %v", err)
	}
	if err := db.PatchBlobHead("none.wav", head); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("patch of no blob: %v", err)
	}
	if err := db.PatchBlobHead("rec.wav", []byte("head++++")); err != nil {
		t.Fatal(err)
	}
	copy(want, "head++++")
	r, err := db.OpenBlob("rec.wav")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := io.ReadAll(r)
	if fi, _ := r.Stat(); err != nil || !bytes.Equal(got, want) || fi.Size() != int64(len(want)) {
		t.Fatalf("read back %d bytes (%v), equal %v; want %d", len(got), err, bytes.Equal(got, want), len(want))
	}
	if err := db.Check(); err != nil {
		t.Fatal(err)
	}
}
