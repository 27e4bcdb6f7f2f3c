package live

import (
	"time"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/postgres"
)

// PostgresCluster is the Cluster of a node on the shared PostgreSQL store:
// placement on the nodes with room, the sessions of a node that stopped,
// recordings appended while they run.
type PostgresCluster struct {
	DB           *postgres.DB
	AdvertiseURL string        // this node's cluster.advertise_url, "" for none
	StaleAfter   time.Duration // a node not heard from this long has stopped
}

var _ Cluster = PostgresCluster{}

func (c PostgresCluster) Place(j *store.Job, capacity int, remote bool) (Node, error) {
	self := postgres.Node{AdvertiseURL: c.AdvertiseURL, LiveCapacity: capacity}
	n, err := c.DB.PlaceLive(j, self, remote, c.StaleAfter)
	if err != nil {
		return Node{}, err
	}
	return Node{ID: n.ID, URL: n.AdvertiseURL}, nil
}

func (c PostgresCluster) JobNode(id string) (string, error) { return c.DB.JobNode(id) }
func (c PostgresCluster) OwnLive() ([]string, error)        { return c.DB.OwnLive() }

func (c PostgresCluster) TakeOrphans() ([]Orphan, error) {
	orphans, err := c.DB.TakeOrphanLive(c.StaleAfter)
	out := make([]Orphan, len(orphans))
	for i, o := range orphans {
		out[i] = Orphan{Job: o.Job, Node: o.Node}
	}
	return out, err
}

func (c PostgresCluster) AppendBlob(name string, at int64, parts ...[]byte) (int64, error) {
	return c.DB.AppendBlob(name, at, parts...)
}

func (c PostgresCluster) PatchBlobHead(name string, head []byte) error {
	return c.DB.PatchBlobHead(name, head)
}

func (c PostgresCluster) BlobSize(name string) (int64, error) {
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

func (c PostgresCluster) ChunkSize() int { return postgres.ChunkSize }
