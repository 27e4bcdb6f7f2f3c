package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/earshot-dev/earshot/app"
	"github.com/earshot-dev/earshot/config"
	"github.com/earshot-dev/earshot/systemd"
)

const configUsage = `usage:
  earshotd config check [--config FILE | FILE]
                                 check a config file (default ` + systemd.DefaultConfig + `) with the
                                 EARSHOT_* variables applied as by run: prints "ok", or each
                                 problem with its key and line, or its variable (exit 1)
`

func cmdConfig(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	path, ok := configCheckPath(args)
	if !ok {
		fmt.Fprint(stderr, configUsage)
		return errors.New("config: usage")
	}
	problems, err := checkConfig(path, os.Environ())
	if err != nil {
		return err
	}
	if len(problems) == 0 {
		fmt.Fprintln(stdout, "ok")
		return nil
	}
	for _, p := range problems {
		fmt.Fprintln(stdout, describe(p))
	}
	return fmt.Errorf("config check: %s: %d problem(s)", path, len(problems))
}

// configCheckPath reads the arguments of "config check": nothing, FILE,
// or --config FILE (also --config=FILE, as run takes it).
func configCheckPath(args []string) (string, bool) {
	if len(args) == 0 || args[0] != "check" {
		return "", false
	}
	switch rest := args[1:]; {
	case len(rest) == 0:
		return systemd.DefaultConfig, true
	case len(rest) == 1 && strings.HasPrefix(rest[0], "--config="):
		return strings.TrimPrefix(rest[0], "--config="), rest[0] != "--config="
	case len(rest) == 1 && !strings.HasPrefix(rest[0], "-"):
		return rest[0], true
	case len(rest) == 2 && (rest[0] == "--config" || rest[0] == "-config") && rest[1] != "":
		return rest[1], true
	}
	return "", false
}

// describe prints a problem of config check: its key and line when known.
func describe(p *config.Problem) string {
	switch {
	case p.Key == "" && p.Line == 0:
		return p.Msg
	case p.Key == "":
		return fmt.Sprintf("line %d: %s", p.Line, p.Msg)
	case p.Line == 0:
		return fmt.Sprintf("%s: %s", p.Key, p.Msg)
	}
	return fmt.Sprintf("%s (line %d): %s", p.Key, p.Line, p.Msg)
}

// checkConfig loads the file at path as `earshotd run --config` does
// (app.Load with env, SetDefaults, Validate) and returns every problem. It
// first walks the YAML against app.Config (config.Check, the walker run
// uses) so that unknown keys and values of the wrong type are all reported,
// each with its dotted key and line, rather than only the first one yaml.v3
// meets. A bad or unknown EARSHOT_ variable is a problem named by the
// variable; a value the environment set that Validate refuses names its key
// and the variable. Validate's problems carry their keys (*config.Problem).
// Beyond Validate it loads the TLS pair, as the server will. An unreadable
// file is an error, not a problem.
func checkConfig(path string, env []string) ([]*config.Problem, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config check: %w", err)
	}
	lines, problems := config.Check(b, app.Type)
	var envProbe app.Config
	problems = append(problems, envProblems(config.ApplyEnv(&envProbe, env))...)
	if len(problems) > 0 {
		return problems, nil
	}
	cfg, err := app.Load(path, env)
	if err != nil {
		// The walk should have found it; report what yaml.v3 says.
		return []*config.Problem{{Msg: err.Error()}}, nil
	}
	setBy := map[string]string{} // key -> the variable that set it
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if k, ok := config.EnvKey(app.Type, name); ok {
			setBy[k.Path] = name
		}
	}
	cfg.SetDefaults()
	found := config.Problems(cfg.Validate())
	if a := cfg.API; a.TLSCert != "" && a.TLSKey != "" {
		if _, err := a.LoadTLS(); err != nil {
			found = append(found, config.Errorf("api.tls_cert", "with api.tls_key: %v", err))
		}
	}
	found = append(found, config.Problems(config.Under("sip", cfg.SIP.CheckTLS(time.Now())))...)
	for _, p := range found {
		p.Line = lines[p.Key]
		if v, ok := setBy[p.Key]; ok {
			p.Line, p.Msg = 0, p.Msg+" (set by "+v+")"
		}
		problems = append(problems, p)
	}
	return problems, nil
}

// envProblems turns config.ApplyEnv's joined *config.EnvError into
// problems named by the variable.
func envProblems(err error) []*config.Problem {
	if err == nil {
		return nil
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	var out []*config.Problem
	for _, e := range errs {
		var ee *config.EnvError
		switch {
		case !errors.As(e, &ee):
			out = append(out, &config.Problem{Msg: e.Error()})
		case errors.Is(ee, config.ErrUnknownKey):
			out = append(out, &config.Problem{Key: ee.Var, Msg: "names no config key"})
		default:
			out = append(out, &config.Problem{Key: ee.Var, Msg: ee.Key + ": " + ee.Err.Error()})
		}
	}
	return out
}
