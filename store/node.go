package store

import "time"

// NodeStatus is one node of a cluster on a shared store as GET /admin/nodes
// lists it: its last heartbeat and what it reported then.
type NodeStatus struct {
	NodeID       string    `json:"node_id"`
	AdvertiseURL string    `json:"advertise_url"`
	LastSeen     time.Time `json:"last_seen"`
	Alive        bool      `json:"alive"`
	LiveCapacity int       `json:"live_capacity"`
	LiveFree     int       `json:"live_free"`
	RunningJobs  int       `json:"running_jobs"`
}
