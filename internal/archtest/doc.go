// Package archtest holds tests of the tree's shape rather than of its
// behaviour: go/ast checks run by `make test` that fail when code returns to
// a pattern issue #15 removed. It has no non-test code beyond this file.
//
//   - No package branches on error text: an err.Error() result (or a
//     variable holding one) compared with == or !=, switched on, or passed to
//     a strings, bytes or regexp matcher is a failure; errors are told apart
//     with errors.Is and errors.As (package errcode for the contract's,
//     config.Problem for a config key).
//   - No config struct is mirrored: two structs in different packages that
//     share three or more yaml keys of the same field name and type, at least
//     half of the smaller one's, are a failure, and so is a struct without
//     yaml keys holding three or more of a section's fields by name and type
//     (a section copied field by field, as api.LiveLimits copied live's); a
//     module owns its Config and the file's root (package app) holds it.
//   - Imports point the way ARCHITECTURE.md draws them: no package depends,
//     directly or through others, on one its rules forbid it (importRules
//     in imports_test.go: daemon/live on daemon or store/postgres, the
//     daemon on a door, the pipeline or a module the daemon runs on the
//     daemon). A package's tests may.
package archtest
