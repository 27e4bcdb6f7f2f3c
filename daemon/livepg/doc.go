// Package livepg is the live sessions' view of the shared PostgreSQL store
// of a cluster: Cluster adapts store/postgres to live.Cluster, the
// interface package daemon/live declares for what it needs of a cluster,
// so that daemon/live never imports a store implementation. The job
// service builds it in a cluster (daemon/cluster_live.go); daemon/live's
// cluster tests run it over a throwaway PostgreSQL server.
//
// It holds no state of its own: each method is one call, or one
// transaction, of store/postgres.
package livepg
