package main

import (
	"context"
	"encoding"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/earshot-dev/earshot/daemon"
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
		fmt.Fprintln(stdout, p)
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

// configProblem is one finding of checkConfig.
type configProblem struct {
	Key  string // dotted YAML key, "" when the file as a whole is wrong
	Line int    // 1-based line in the file, 0 when the key is not in it
	Msg  string
}

func (p configProblem) String() string {
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
// (daemon.LoadConfig with env, SetDefaults, Validate) and returns every
// problem. It first walks the YAML against daemon.Config so that unknown
// keys and values of the wrong type are all reported, each with its dotted
// key and line, rather than only the first one yaml.v3 meets. A bad or
// unknown EARSHOT_ variable is a problem named by the variable; a value the
// environment set that Validate refuses names its key and the variable. An
// unreadable file is an error, not a problem.
func checkConfig(path string, env []string) ([]configProblem, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config check: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return []configProblem{{Msg: err.Error()}}, nil
	}
	lines := map[string]int{}
	var problems []configProblem
	if len(doc.Content) > 0 {
		walkConfig(doc.Content[0], reflect.TypeFor[daemon.Config](), "", lines, &problems)
	}
	var envProbe daemon.Config
	problems = append(problems, envProblems(envProbe.ApplyEnv(env))...)
	if len(problems) > 0 {
		return problems, nil
	}
	cfg, err := daemon.LoadConfig(path, env)
	if err != nil {
		// The walk should have found it; report what yaml.v3 says.
		return []configProblem{{Msg: err.Error()}}, nil
	}
	setBy := map[string]string{} // key -> the variable that set it
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if k, ok := daemon.EnvKey(name); ok {
			setBy[k.Path] = name
		}
	}
	cfg.SetDefaults()
	known := configKeys()
	for _, msg := range flattenErrors(cfg.Validate()) {
		key, rest := problemKey(msg, known)
		p := configProblem{Key: key, Line: lines[key], Msg: rest}
		if v, ok := setBy[key]; ok {
			p.Line, p.Msg = 0, rest+" (set by "+v+")"
		}
		problems = append(problems, p)
	}
	return problems, nil
}

// envProblems turns ApplyEnv's joined *daemon.EnvError into problems named
// by the variable.
func envProblems(err error) []configProblem {
	if err == nil {
		return nil
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	var out []configProblem
	for _, e := range errs {
		var ee *daemon.EnvError
		switch {
		case !errors.As(e, &ee):
			out = append(out, configProblem{Msg: e.Error()})
		case errors.Is(ee, daemon.ErrUnknownKey):
			out = append(out, configProblem{Key: ee.Var, Msg: "names no config key"})
		default:
			out = append(out, configProblem{Key: ee.Var, Msg: ee.Key + ": " + ee.Err.Error()})
		}
	}
	return out
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()
var textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()

// walkConfig checks node against type t (the type its value decodes into),
// recording the line of every key it meets in lines and each unknown key or
// undecodable value in problems.
func walkConfig(node *yaml.Node, t reflect.Type, key string, lines map[string]int, problems *[]configProblem) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if node.Kind == yaml.AliasNode && node.Alias != nil {
		node = node.Alias
	}
	leaf := t.Kind() != reflect.Struct && t.Kind() != reflect.Map && t.Kind() != reflect.Slice ||
		reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType)
	if node.Tag == "!!null" {
		return // null leaves the field at its zero value, i.e. the default
	}
	if leaf {
		if err := node.Decode(reflect.New(t).Interface()); err != nil {
			*problems = append(*problems, configProblem{Key: key, Line: node.Line, Msg: typeMessage(node, t, err)})
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if node.Kind != yaml.MappingNode {
			*problems = append(*problems, configProblem{Key: key, Line: node.Line, Msg: "must be a mapping of keys"})
			return
		}
		fields := yamlFields(t)
		for i := 0; i+1 < len(node.Content); i += 2 {
			k, v := node.Content[i], node.Content[i+1]
			full := joinKey(key, k.Value)
			lines[full] = k.Line
			ft, ok := fields[k.Value]
			if !ok {
				*problems = append(*problems, configProblem{Key: full, Line: k.Line, Msg: "unknown key"})
				continue
			}
			walkConfig(v, ft, full, lines, problems)
		}
	case reflect.Map:
		if node.Kind != yaml.MappingNode {
			*problems = append(*problems, configProblem{Key: key, Line: node.Line, Msg: "must be a mapping"})
			return
		}
		for i := 0; i+1 < len(node.Content); i += 2 {
			k, v := node.Content[i], node.Content[i+1]
			full := joinKey(key, k.Value)
			lines[full] = k.Line
			walkConfig(v, t.Elem(), full, lines, problems)
		}
	case reflect.Slice:
		if node.Kind != yaml.SequenceNode {
			*problems = append(*problems, configProblem{Key: key, Line: node.Line, Msg: "must be a list"})
			return
		}
		for i, v := range node.Content {
			walkConfig(v, t.Elem(), fmt.Sprintf("%s[%d]", key, i), lines, problems)
		}
	}
}

// yamlFields maps the YAML keys of struct t (inline structs included) to
// their field types, as yaml.v3 names them.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range reflectFields(t) {
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if slices.Contains(strings.Split(opts, ","), "inline") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range yamlFields(ft) {
					out[k] = v
				}
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name) // yaml.v3's default
		}
		out[name] = f.Type
	}
	return out
}

// reflectFields yields the exported fields of struct t.
func reflectFields(t reflect.Type) func(func(reflect.StructField) bool) {
	return func(yield func(reflect.StructField) bool) {
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && !yield(f) {
				return
			}
		}
	}
}

func joinKey(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

// typeMessage says why the scalar in node does not decode into t.
func typeMessage(node *yaml.Node, t reflect.Type, err error) string {
	want := t.Kind().String()
	switch {
	case t.PkgPath() == "time" && t.Name() == "Duration":
		want = `a duration such as "90s", "5m" or "72h"`
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		want = "an integer"
	case t.Kind() == reflect.Bool:
		want = "true or false"
	case t.Kind() == reflect.String:
		want = "a string"
	}
	if node.Kind != yaml.ScalarNode {
		return fmt.Sprintf("must be %s", want)
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) && want == t.Kind().String() {
		return err.Error()
	}
	return fmt.Sprintf("must be %s, not %q", want, node.Value)
}

// flattenErrors splits a joined error (errors.Join, possibly nested, or
// several lines) into one message per problem.
func flattenErrors(err error) []string {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, flattenErrors(e)...)
		}
		return out
	}
	var out []string
	for line := range strings.Lines(err.Error()) {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// problemKey splits a Validate message into the dotted key it starts with
// and the rest: "limits.max_queued: must be ..." or, from a nested
// Validate that repeats its name, "sphinx: sphinx: hmm: stat ...". The key
// is the longest known key built from the leading ": "-separated words.
func problemKey(msg string, known map[string]bool) (key, rest string) {
	words := strings.Split(msg, ": ")
	used := 0
	for _, w := range words[:len(words)-1] {
		switch {
		case known[joinKey(key, w)]:
			key = joinKey(key, w)
		case key != "" && w == key[strings.LastIndex(key, ".")+1:]:
			// the nested Validate's own name again
		default:
			return key, strings.Join(words[used:], ": ")
		}
		used++
	}
	return key, strings.Join(words[used:], ": ")
}

// configKeys lists every dotted key of daemon.Config.
func configKeys() map[string]bool {
	out := map[string]bool{}
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || reflect.PointerTo(t).Implements(unmarshalerType) {
			return
		}
		for k, ft := range yamlFields(t) {
			full := joinKey(prefix, k)
			out[full] = true
			walk(ft, full)
		}
	}
	walk(reflect.TypeFor[daemon.Config](), "")
	return out
}
