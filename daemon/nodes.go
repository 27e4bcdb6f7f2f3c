package daemon

import (
	"context"
	"time"

	"github.com/earshot-dev/earshot/store"
)

// heartbeatEvery is how often a node on a shared store publishes its
// state; a node not heard from for nodeStaleAfter is shown as not alive.
const (
	heartbeatEvery = 2 * time.Second
	nodeStaleAfter = 3 * heartbeatEvery
	// orphanAfter is how long this node's own beats must have gone through
	// before it judges others stopped.
	orphanAfter = nodeStaleAfter + heartbeatEvery
)

// state is this node's load now.
func (d *Daemon) state() store.Node {
	live := d.live.Sessions()
	d.mu.Lock()
	running := len(d.running)
	d.mu.Unlock()
	return store.Node{
		ID: d.cfg.Cluster.NodeID, AdvertiseURL: d.cfg.Cluster.AdvertiseURL,
		LiveCapacity: d.cfg.Live.Capacity, LiveFree: max(d.cfg.Live.Capacity-live, 0), RunningJobs: running,
	}
}

// runHeartbeat publishes this node's state every heartbeatEvery until ctx
// ends. A failed beat is logged and the next one tried. After a beat the
// live sessions adopt those placed here by other nodes and, once this
// node's own beats have gone through for orphanAfter (a node back from an
// outage must first let the others beat again), end the sessions of nodes
// that stopped (daemon/live/cluster.go).
func (d *Daemon) runHeartbeat(ctx context.Context, r store.Cluster) error {
	t := time.NewTicker(heartbeatEvery)
	defer t.Stop()
	var okSince time.Time // zero while beats fail
	for {
		if err := r.Heartbeat(d.state()); err != nil {
			d.log.Warn("heartbeat", "component", "cluster", "error", err)
			okSince = time.Time{}
		} else {
			if okSince.IsZero() {
				okSince = time.Now()
			}
			if err := d.live.AdoptPlaced(); err != nil {
				d.log.Warn("adopt live sessions placed here", "component", "cluster", "error", err)
			}
			if time.Since(okSince) >= orphanAfter {
				if err := d.live.EndOrphans(); err != nil {
					d.log.Warn("end live sessions of stopped nodes", "component", "cluster", "error", err)
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Nodes lists the nodes sharing the store with their last heartbeat; on
// the embedded store it is this node alone, as it is now.
func (d *Daemon) Nodes(ctx context.Context) ([]store.NodeStatus, error) {
	r := d.db.Cluster()
	if r == nil {
		n := d.state()
		return []store.NodeStatus{{NodeID: n.ID, AdvertiseURL: n.AdvertiseURL, LastSeen: time.Now().UTC(), Alive: true,
			LiveCapacity: n.LiveCapacity, LiveFree: n.LiveFree, RunningJobs: n.RunningJobs}}, nil
	}
	ns, err := r.Nodes()
	if err != nil {
		return nil, err
	}
	out := make([]store.NodeStatus, 0, len(ns))
	for _, n := range ns {
		out = append(out, store.NodeStatus{NodeID: n.ID, AdvertiseURL: n.AdvertiseURL, LastSeen: n.LastSeen, Alive: n.Age < nodeStaleAfter,
			LiveCapacity: n.LiveCapacity, LiveFree: n.LiveFree, RunningJobs: n.RunningJobs})
	}
	return out, nil
}
