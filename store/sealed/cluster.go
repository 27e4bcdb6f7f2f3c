package sealed

import (
	"errors"
	"time"

	"github.com/earshot-dev/earshot/store"
)

// cluster is a shared backend's Cluster with the live jobs it stores and
// returns sealed and opened.
type cluster struct {
	store.Cluster
	s *Store
}

// ErrNoAppend is returned by the sealed Cluster's AppendBlob and
// PatchBlobHead: a sealed blob is written whole (its chunks' nonces and
// last flag fixed when it is written), so a live recording reaches a sealed
// shared store at the session's end, not while it runs.
var ErrNoAppend = errors.New("sealed: a sealed blob is written whole, not appended")

func (c *cluster) PlaceLive(j *store.Job, self store.Node, remote bool, staleAfter time.Duration) (store.Node, error) {
	if j == nil {
		return c.Cluster.PlaceLive(j, self, remote, staleAfter)
	}
	sj, err := c.s.sealJob(j)
	if err != nil {
		return store.Node{}, err
	}
	return c.Cluster.PlaceLive(sj, self, remote, staleAfter)
}

func (c *cluster) TakeOrphanLive(staleAfter time.Duration) ([]store.Orphan, error) {
	os, err := c.Cluster.TakeOrphanLive(staleAfter)
	if err != nil {
		return nil, err
	}
	for i := range os {
		if os[i].Job, err = c.s.open(os[i].Job, nil); err != nil {
			return nil, err
		}
	}
	return os, nil
}

func (c *cluster) AppendBlob(string, int64, ...[]byte) (int64, error) { return 0, ErrNoAppend }
func (c *cluster) PatchBlobHead(string, []byte) error                 { return ErrNoAppend }
