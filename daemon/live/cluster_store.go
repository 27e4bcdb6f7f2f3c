package live

import (
	"time"

	"github.com/earshot-dev/earshot/store"
)

// StoreCluster is the Cluster of a node on a store shared by the nodes
// (one whose Cluster capability is not nil, store/postgres): placement on
// the nodes with room, the sessions of a node that stopped, recordings
// appended while they run. It holds no state of its own: each method is
// one call of the store's.
type StoreCluster struct {
	DB           store.Store   // DB.Cluster() is not nil
	AdvertiseURL string        // this node's cluster.advertise_url, "" for none
	StaleAfter   time.Duration // a node not heard from this long has stopped
}

// NewCluster returns the Cluster of db, or nil (an untyped nil interface)
// when db is a store one process owns.
func NewCluster(db store.Store, advertiseURL string, staleAfter time.Duration) Cluster {
	if db.Cluster() == nil {
		return nil
	}
	return StoreCluster{DB: db, AdvertiseURL: advertiseURL, StaleAfter: staleAfter}
}

var _ Cluster = StoreCluster{}

func (c StoreCluster) Place(j *store.Job, capacity int, remote bool) (Node, error) {
	self := store.Node{AdvertiseURL: c.AdvertiseURL, LiveCapacity: capacity}
	n, err := c.DB.Cluster().PlaceLive(j, self, remote, c.StaleAfter)
	if err != nil {
		return Node{}, err
	}
	return Node{ID: n.ID, URL: n.AdvertiseURL}, nil
}

func (c StoreCluster) JobNode(id string) (string, error) { return c.DB.Cluster().JobNode(id) }
func (c StoreCluster) OwnLive() ([]string, error)        { return c.DB.Cluster().OwnLive() }

func (c StoreCluster) TakeOrphans() ([]store.Orphan, error) {
	return c.DB.Cluster().TakeOrphanLive(c.StaleAfter)
}

func (c StoreCluster) AppendBlob(name string, at int64, parts ...[]byte) (int64, error) {
	return c.DB.Cluster().AppendBlob(name, at, parts...)
}

func (c StoreCluster) PatchBlobHead(name string, head []byte) error {
	return c.DB.Cluster().PatchBlobHead(name, head)
}

func (c StoreCluster) BlobSize(name string) (int64, error) {
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

func (c StoreCluster) ChunkSize() int { return c.DB.Cluster().ChunkSize() }
