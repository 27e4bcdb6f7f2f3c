// Package app is the composition root (run.go: Run opens the store
// backend, loads the pipeline, builds the job service and the doors and
// runs them) and the appliance's configuration file as one value: the
// process's own keys (listen, ops_listen, public_url, log_level), the job
// service's keys and sections (daemon.Config, inline), and the doors'
// sections (sip.Config, webrtc.Config, and api.Config under api:), each
// owned by its package with its SetDefaults and Validate. The doors are not
// part of the job service (Run runs them beside it), so their configs sit
// here beside daemon.Config rather than inside it or mirrored.
//
// Load reads the file, the EARSHOT_* variables and --set flags onto it
// through package config's one walker; `earshotd config check` walks the
// same type. A new key is a field with a yaml tag in its module's Config
// (a new section is a field in daemon.Config, or here for a door); nothing
// else changes.
package app
