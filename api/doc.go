// Package api is earshot's HTTP surface: routing, the x-service-key header,
// request bodies, the contract's JSON shapes and error bodies (SPEC.md §7).
// It owns no state: every operation goes through the job service it is given,
// and errors are mapped to statuses in one place (errors.go).
package api
