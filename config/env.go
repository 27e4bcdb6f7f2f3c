package config

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// EnvPrefix starts every environment variable that sets a config key.
const EnvPrefix = "EARSHOT_"

// EnvName is the environment variable for a dotted key path: EARSHOT_, then
// the path upper-cased with dots and dashes as underscores
// ("engines.routes.model-1" is EARSHOT_ENGINES_ROUTES_MODEL_1).
func EnvName(path string) string {
	return EnvPrefix + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(path))
}

// envAliases are variables kept from before every key had one.
var envAliases = map[string]string{"EARSHOT_DECODERS": "sphinx.decoders"}

// EnvError is one EARSHOT_ variable ApplyEnv could not apply.
type EnvError struct {
	Var string // the variable, e.g. EARSHOT_WORKERS
	Key string // the dotted key it sets, "" when it names none
	Err error
}

func (e *EnvError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("%s: %v", e.Var, e.Err)
	}
	return fmt.Sprintf("%s (%s): %v", e.Var, e.Key, e.Err)
}

func (e *EnvError) Unwrap() error { return e.Err }

// notConfigEnv says whether name is an EARSHOT_ variable that is not a
// config key: the test suites' own switches, which reach the daemon when a
// test starts it, and the API clients' (earshotd stream and submit: the
// daemon's URL and the key), which a shell may hold when it runs the daemon.
func notConfigEnv(name string) bool {
	switch name {
	case "EARSHOT_ARTIFACTS", "EARSHOT_NODE_MODULES", "EARSHOT_DEB_INSTALL_TEST", "EARSHOT_DEBIAN_MIRROR",
		"EARSHOT_STORE_SEED", "EARSHOT_STORE_CRASH_DIR", "EARSHOT_URL", "EARSHOT_KEY":
		return true
	}
	return false
}

// EnvKey returns the key of struct type t that the EARSHOT_ variable name
// sets: the one whose EnvName it is, or an alias kept from before every key
// had a variable (EARSHOT_DECODERS: sphinx.decoders).
func EnvKey(t reflect.Type, name string) (Key, bool) {
	for _, k := range Keys(t) {
		if k.Env == name || envAliases[name] == k.Path {
			return k, true
		}
	}
	return Key{}, false
}

// ApplyEnv sets keys of *root from EARSHOT_* variables ("NAME=value" as in
// os.Environ), each found by EnvKey and parsed as by Set. An EARSHOT_
// variable naming no key is an error (ErrUnknownKey), so a typo does not
// pass silently; the test suites' own switches (EARSHOT_STORE_SEED ...) are
// ignored. Every problem is returned, joined, each an *EnvError; the good
// variables are applied all the same.
func ApplyEnv(root any, env []string) error {
	t := reflect.TypeOf(root).Elem()
	var errs []error
	for _, kv := range env {
		name, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) || notConfigEnv(name) {
			continue
		}
		k, ok := EnvKey(t, name)
		if !ok {
			errs = append(errs, &EnvError{Var: name, Err: ErrUnknownKey})
			continue
		}
		if err := set(root, k, v); err != nil {
			errs = append(errs, &EnvError{Var: name, Key: k.Path, Err: err})
		}
	}
	return errors.Join(errs...)
}
