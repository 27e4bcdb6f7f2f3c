// Package app is the appliance's configuration file as one value: the job
// service's sections (daemon.Config, inline) and the HTTP server's
// (api.Config under api:), each owned by its package with its SetDefaults
// and Validate. It exists because api imports daemon, so the daemon cannot
// hold api.Config: rather than mirror it, both sit side by side here.
//
// Load reads the file, the EARSHOT_* variables and --set flags onto it
// through package config's one walker; `earshotd config check` walks the
// same type. A new key is a field with a yaml tag in its module's Config
// (or a new section field in daemon.Config); nothing here changes.
package app
