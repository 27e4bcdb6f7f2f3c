package store

import (
	"context"
	"time"

	"github.com/earshot-dev/earshot/errcode"
)

// Cluster is what a store shared by several nodes (store/postgres) does
// beyond Store, the one capability the daemon asks a backend for instead of
// asserting optional interfaces: the nodes' heartbeats, the queue's wake-ups
// from other nodes, the leases on claimed work, the live sessions' placement
// and a stopped node's sessions, and recordings appended while they run.
// Store.Cluster returns nil on a store one process owns (store/bolt).
type Cluster interface {
	// Heartbeat records this node's state (n.ID is ignored: the node is
	// the backend's own) with the backend's clock as its last sight.
	Heartbeat(n Node) error
	// Nodes returns every node that ever sent a heartbeat, by id.
	Nodes() ([]Node, error)
	// WatchQueue calls notify whenever any node queues a pre-recorded
	// job, until ctx ends.
	WatchQueue(ctx context.Context, notify func()) error
	// KeepLeases renews this node's leases on its claimed jobs and puts
	// back in the queue the jobs of nodes whose leases ran out, reporting
	// each round, until ctx ends.
	KeepLeases(ctx context.Context, report func(requeued []string, err error)) error
	// PlaceLive stores the new live job j on a node with a free live slot
	// and returns that node: self (this node as it stands now, its
	// LiveCapacity the slots it takes) while it has room, else with remote
	// another node heard from within staleAfter that advertises a URL. No
	// node with room is ErrNoLiveRoom and nothing is stored.
	PlaceLive(j *Job, self Node, remote bool, staleAfter time.Duration) (Node, error)
	// JobNode returns the node that owns job id.
	JobNode(id string) (string, error)
	// OwnLive returns the ids of this node's live jobs not yet ended.
	OwnLive() ([]string, error)
	// TakeOrphanLive moves to this node every live job not yet ended whose
	// node has not sent a heartbeat for staleAfter and returns them, each
	// taken by one node only.
	TakeOrphanLive(staleAfter time.Duration) ([]Orphan, error)
	// AppendBlob adds parts (each at most ChunkSize bytes) to the blob name
	// when it holds at bytes and returns its size after; another size is
	// ErrExists and nothing is added.
	AppendBlob(name string, at int64, parts ...[]byte) (int64, error)
	// PatchBlobHead replaces the blob's first chunk with head, as long.
	PatchBlobHead(name string, head []byte) error
	// ChunkSize bounds one part of AppendBlob.
	ChunkSize() int
}

// DefaultJobLease is how long a job or batch pass a node claimed on a
// shared store stays its own without a renewal (cluster.job_lease).
const DefaultJobLease = 30 * time.Second

// Node is one node's last heartbeat: who it is, where it is reached and
// its load then.
type Node struct {
	ID           string
	AdvertiseURL string
	LastSeen     time.Time // on the backend's clock
	Age          time.Duration
	LiveCapacity int // live sessions it takes
	LiveFree     int // live sessions it could still open
	RunningJobs  int // pre-recorded jobs and batch passes it was running
}

// Orphan is a live job whose node stopped sending heartbeats, now this
// node's to end.
type Orphan struct {
	Job  *Job
	Node string // the node that ran it
}

// ErrNoLiveRoom is returned by Cluster.PlaceLive when no live node has a free live
// slot.
var ErrNoLiveRoom = errcode.ErrAtCapacity.Sub("store: no node has room for a live session", "")
