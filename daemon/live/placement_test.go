package live

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest/memstore"
)

// fakeCluster places live jobs as a shared store would: on the node its
// answer names, storing the job, or nowhere (ErrNoLiveRoom).
type fakeCluster struct {
	db *memstore.Store
	mu sync.Mutex
	to string // the node Place picks: "self", "other" or "" for none with room
	// capacities records each Place call's capacity and remote.
	capacities []int
	remotes    []bool
}

func (c *fakeCluster) Place(j *store.Job, capacity int, remote bool) (Node, error) {
	c.mu.Lock()
	c.capacities, c.remotes = append(c.capacities, capacity), append(c.remotes, remote)
	to := c.to
	c.mu.Unlock()
	if to == "" || to == "self" && capacity == 0 || to == "other" && !remote {
		return Node{}, store.ErrNoLiveRoom
	}
	if err := c.db.CreateJob(j); err != nil {
		return Node{}, err
	}
	return Node{ID: to, URL: "http://" + to + ":8080"}, nil
}

func (c *fakeCluster) JobNode(string) (string, error) { return "self", nil }
func (c *fakeCluster) OwnLive() ([]string, error)     { return nil, nil }
func (c *fakeCluster) TakeOrphans() ([]store.Orphan, error) {
	return nil, nil
}
func (c *fakeCluster) AppendBlob(string, int64, ...[]byte) (int64, error) { return 0, nil }
func (c *fakeCluster) PatchBlobHead(string, []byte) error                 { return nil }
func (c *fakeCluster) BlobSize(string) (int64, error)                     { return 0, nil }
func (c *fakeCluster) ChunkSize() int                                     { return 1 << 16 }

// TestCreateLivePlacement: in a cluster a new session goes where the
// shared store places it: here while this node has room (a session starts
// here, its URL this node's), on another node when this one is full (no
// session here, the other node's URL), and none with room anywhere is 503
// naming this node's capacity, with nothing stored.
func TestCreateLivePlacement(t *testing.T) {
	pl, err := testPipeline()
	if err != nil {
		t.Fatal(err)
	}
	var cfg Config
	cfg.Capacity = 1
	cfg.SetDefaults()
	cfg.SetPoolDefaults(1)
	db := memstore.New()
	cl := &fakeCluster{db: db, to: "self"}
	s := New(cfg, Deps{Store: db, Recordings: blobFiles{db, t.TempDir()}, Signals: &signals{}, Pipeline: pl,
		Decoders: 1, Cluster: cl, NodeID: "self", RecordingSync: time.Hour})
	t.Cleanup(func() { s.Shutdown(t.Context()) })

	here, err := s.CreateLive(t.Context(), "acme", "", "r", []byte(`{}`), "")
	if err != nil || here.NodeURL != "http://self:8080" || s.lookup(here.ID) == nil {
		t.Fatalf("placed here: %+v, %v, session here %v", here, err, s.lookup(here.ID) != nil)
	}
	cl.mu.Lock()
	cl.to = "other"
	cl.mu.Unlock()
	there, err := s.CreateLive(t.Context(), "acme", "", "r", []byte(`{}`), "")
	if err != nil || there.NodeURL != "http://other:8080" || s.lookup(there.ID) != nil {
		t.Fatalf("placed on the other node: %+v, %v", there, err)
	}
	cl.mu.Lock()
	cl.to = ""
	cl.mu.Unlock()
	_, err = s.CreateLive(t.Context(), "acme", "", "r", []byte(`{}`), "")
	if !errors.Is(err, ingest.ErrAtCapacity) || errcode.Status(err) != 503 {
		t.Errorf("no node with room: %v (%d)", err, errcode.Status(err))
	}
	if n, _ := db.CountJobs(store.KindLive, ""); n != 2 {
		t.Errorf("%d live jobs stored, want the 2 placed", n)
	}
	// This node full (capacity 1, one session): it asks for no slot of its
	// own (capacity 0) and lets the store place remotely.
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if len(cl.capacities) != 3 || cl.capacities[0] != 1 || cl.capacities[1] != 0 || !cl.remotes[1] {
		t.Errorf("Place asked with capacities %v, remote %v; want [1 0 0], remote after the first", cl.capacities, cl.remotes)
	}
}
