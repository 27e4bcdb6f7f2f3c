// Package api is earshot's HTTP surface: routing, the x-service-key header,
// request bodies, the contract's JSON shapes and error bodies (SPEC.md §7),
// the admin key endpoints (/admin/keys), TLS on the main listener and the
// operations endpoints, beside it or on their own listener.
// It owns no job state: every operation goes through the job service it is
// given, and errors are mapped to statuses in one place (errors.go). Its one
// state of its own is the per-key request-rate buckets (ratelimit.go),
// bounded by the keys active in the last minute.
package api
