package daemon

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/earshot-dev/earshot/daemon/live"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/postgres"
)

// clusterLive is the shared store as the live sessions of a cluster use it
// (live.Cluster): placement on the nodes with room, a dead node's sessions,
// recordings appended while they run.
type clusterLive struct {
	db  *postgres.DB
	cfg ClusterConfig
}

// newClusterLive returns the live sessions' view of a shared store, nil
// (an untyped nil interface) on the embedded store.
func newClusterLive(d *Daemon) live.Cluster {
	db, ok := d.db.(*postgres.DB)
	if !ok {
		return nil
	}
	return clusterLive{db: db, cfg: d.cfg.Cluster}
}

func (c clusterLive) Place(j *store.Job, capacity int, remote bool) (live.Node, error) {
	self := postgres.Node{AdvertiseURL: c.cfg.AdvertiseURL, LiveCapacity: capacity}
	n, err := c.db.PlaceLive(j, self, remote, nodeStaleAfter)
	if err != nil {
		return live.Node{}, err
	}
	return live.Node{ID: n.ID, URL: n.AdvertiseURL}, nil
}

func (c clusterLive) JobNode(id string) (string, error) { return c.db.JobNode(id) }
func (c clusterLive) OwnLive() ([]string, error)        { return c.db.OwnLive() }

func (c clusterLive) TakeOrphans() ([]live.Orphan, error) {
	orphans, err := c.db.TakeOrphanLive(nodeStaleAfter)
	out := make([]live.Orphan, len(orphans))
	for i, o := range orphans {
		out[i] = live.Orphan{Job: o.Job, Node: o.Node}
	}
	return out, err
}

func (c clusterLive) AppendBlob(name string, at int64, parts ...[]byte) (int64, error) {
	return c.db.AppendBlob(name, at, parts...)
}

func (c clusterLive) PatchBlobHead(name string, head []byte) error {
	return c.db.PatchBlobHead(name, head)
}

func (c clusterLive) BlobSize(name string) (int64, error) {
	r, err := c.db.OpenBlob(name)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	fi, err := r.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

func (c clusterLive) ChunkSize() int { return postgres.ChunkSize }

// dropTakenRecordings removes the local recordings this node left when it
// stopped whose sessions a survivor ended meanwhile (the shared store
// keeps what reached it); the others stay for recovery (blobFile).
func (d *Daemon) dropTakenRecordings() {
	db, ok := d.db.(*postgres.DB)
	if !ok {
		return
	}
	dir := filepath.Join(d.cfg.DataDir, recordingsDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			d.log.Error("list local recordings", "component", "live", "error", err)
		}
		return
	}
	for _, e := range entries {
		id, ok := strings.CutPrefix(strings.TrimSuffix(e.Name(), ".wav"), "live-")
		if !ok || !strings.HasSuffix(e.Name(), ".wav") {
			continue
		}
		node, err := db.JobNode(id)
		if err != nil && !errors.Is(err, store.ErrNotFound) || node == d.cfg.Cluster.NodeID {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			d.log.Error("remove a local recording", "component", "live", "error", err)
			continue
		}
		d.log.Info("removed the local recording of a session another node ended", "component", "live", "session_id", id, "node_id", node)
	}
}
