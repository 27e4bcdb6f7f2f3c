package livepg

import (
	"time"

	"github.com/earshot-dev/earshot/daemon/live"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/postgres"
)

// Cluster is the live.Cluster of a node on the shared PostgreSQL store:
// placement on the nodes with room, the sessions of a node that stopped,
// recordings appended while they run.
type Cluster struct {
	DB           *postgres.DB
	AdvertiseURL string        // this node's cluster.advertise_url, "" for none
	StaleAfter   time.Duration // a node not heard from this long has stopped
}

var _ live.Cluster = Cluster{}

func (c Cluster) Place(j *store.Job, capacity int, remote bool) (live.Node, error) {
	self := postgres.Node{AdvertiseURL: c.AdvertiseURL, LiveCapacity: capacity}
	n, err := c.DB.PlaceLive(j, self, remote, c.StaleAfter)
	if err != nil {
		return live.Node{}, err
	}
	return live.Node{ID: n.ID, URL: n.AdvertiseURL}, nil
}

func (c Cluster) JobNode(id string) (string, error) { return c.DB.JobNode(id) }
func (c Cluster) OwnLive() ([]string, error)        { return c.DB.OwnLive() }

func (c Cluster) TakeOrphans() ([]live.Orphan, error) {
	orphans, err := c.DB.TakeOrphanLive(c.StaleAfter)
	out := make([]live.Orphan, len(orphans))
	for i, o := range orphans {
		out[i] = live.Orphan{Job: o.Job, Node: o.Node}
	}
	return out, err
}

func (c Cluster) AppendBlob(name string, at int64, parts ...[]byte) (int64, error) {
	return c.DB.AppendBlob(name, at, parts...)
}

func (c Cluster) PatchBlobHead(name string, head []byte) error {
	return c.DB.PatchBlobHead(name, head)
}

func (c Cluster) BlobSize(name string) (int64, error) {
	r, err := c.DB.OpenBlob(name)
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

func (c Cluster) ChunkSize() int { return postgres.ChunkSize }
