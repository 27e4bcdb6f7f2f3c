// Package config maps the appliance's YAML file, its EARSHOT_* environment
// variables and `earshotd run --set key=value` onto settings structs, with
// one reflection walker (walk.go) that all four uses share: decoding the
// file, listing the keys, setting one key from text, and checking a file
// key by key with line numbers (config check).
//
// It knows no struct of earshot's: each module owns its Config (snake_case
// yaml tags, SetDefaults, Validate) and the application's root struct
// (package app) holds them. A key is a leaf of that tree: its dotted YAML
// path ("limits.max_upload_bytes"); an inline struct adds its keys to its
// parent's. A new key is a new field with a yaml tag; nothing else here
// changes.
//
// It also holds what every module's config needs and none owns: Problem,
// the key-naming error Validate returns (so no caller recovers a key from
// error text), and Secret, a credential that never prints.
package config
