// Package store is the contract of earshot's durable state, whichever
// backend keeps it: the Store interface and the one capability a store
// shared by several nodes adds (Cluster), the domain types (Job, Key,
// Upload, Delivery, Node), the sentinel errors every backend wraps, and the
// record rules both backends apply (Job.Validate, ApplyUpdate,
// CheckDelivery, Upload.Validate), so they accept and refuse the same
// records.
//
// It names no backend: store/bolt is the embedded bbolt store of one box,
// store/postgres the shared store of a cluster, and app.OpenStore, the
// composition root, opens one of them. store/storetest runs one
// conformance suite against both.
package store
