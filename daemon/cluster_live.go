package daemon

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/earshot-dev/earshot/daemon/live"
	"github.com/earshot-dev/earshot/store"
)

// newClusterLive returns the live sessions' view of a shared store
// (live.StoreCluster), nil (an untyped nil interface) on the embedded store.
func newClusterLive(d *Daemon) live.Cluster {
	return live.NewCluster(d.db, d.cfg.Cluster.AdvertiseURL, nodeStaleAfter)
}

// dropTakenRecordings removes the local recordings this node left when it
// stopped whose sessions a survivor ended meanwhile (the shared store
// keeps what reached it); the others stay for recovery (blobFile).
func (d *Daemon) dropTakenRecordings() {
	c := d.db.Cluster()
	if c == nil {
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
		node, err := c.JobNode(id)
		if err != nil && !errors.Is(err, store.ErrNotFound) || node == d.cfg.Cluster.NodeID {
			continue
		}
		if err := d.dropRecording(filepath.Join(dir, e.Name())); err != nil { // a sealed spool with its key
			d.log.Error("remove a local recording", "component", "live", "error", err)
			continue
		}
		d.log.Info("removed the local recording of a session another node ended", "component", "live", "session_id", id, "node_id", node)
	}
}
