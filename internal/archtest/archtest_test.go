package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// root is the module's directory: the nearest parent with go.mod.
func root(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
}

// sourceFile is one parsed non-test Go file of the module.
type sourceFile struct {
	rel  string // path from the module root
	dir  string // its package directory, from the module root
	file *ast.File
}

// parseTree parses every non-test .go file under the module root, skipping
// testdata, hidden and vendored directories.
func parseTree(t *testing.T) (*token.FileSet, []sourceFile) {
	t.Helper()
	top := root(t)
	fset := token.NewFileSet()
	var out []sourceFile
	err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != top && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(top, path)
		out = append(out, sourceFile{rel: rel, dir: filepath.Dir(rel), file: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fset, out
}

// isErrorCall reports whether e is a call x.Error() with no arguments: an
// error's text.
func isErrorCall(e ast.Expr) bool {
	c, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok || len(c.Args) != 0 {
		return false
	}
	s, ok := c.Fun.(*ast.SelectorExpr)
	return ok && s.Sel.Name == "Error"
}

// matchers are the functions that look into a string's content.
var matchers = map[string]map[string]bool{
	"strings": set("Contains", "ContainsAny", "ContainsRune", "ContainsFunc", "HasPrefix", "HasSuffix", "TrimPrefix",
		"TrimSuffix", "CutPrefix", "CutSuffix", "Cut", "Index", "IndexAny", "LastIndex", "EqualFold", "Compare", "Split",
		"SplitN", "SplitAfter", "Fields", "Lines", "Count", "Replace", "ReplaceAll", "Trim", "TrimLeft", "TrimRight"),
	"bytes":  set("Contains", "HasPrefix", "HasSuffix", "Index", "Equal", "EqualFold", "Compare", "Split", "Lines"),
	"regexp": set("MatchString", "Match"),
}

func set(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// errorTextMatches lists the places in f that branch on error text: an
// err.Error() call, or a variable assigned one in the same function,
// compared, switched on, or handed to a matcher (matchers, or a regexp's
// MatchString/FindString).
func errorTextMatches(fset *token.FileSet, f *ast.File) []string {
	var out []string
	report := func(n ast.Node, what string) {
		out = append(out, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), what))
	}
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		// Variables holding an error's text in this function.
		texts := map[string]bool{}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if as, ok := n.(*ast.AssignStmt); ok && len(as.Lhs) == len(as.Rhs) {
				for i, r := range as.Rhs {
					if id, ok := as.Lhs[i].(*ast.Ident); ok && isErrorCall(r) {
						texts[id.Name] = true
					}
				}
			}
			return true
		})
		isText := func(e ast.Expr) bool {
			if isErrorCall(e) {
				return true
			}
			id, ok := ast.Unparen(e).(*ast.Ident)
			return ok && texts[id.Name]
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if (n.Op == token.EQL || n.Op == token.NEQ) && (isText(n.X) || isText(n.Y)) {
					report(n, "compares an error's text")
				}
			case *ast.SwitchStmt:
				if n.Tag != nil && isText(n.Tag) {
					report(n, "switches on an error's text")
				}
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				pkg, _ := sel.X.(*ast.Ident)
				matcher := pkg != nil && matchers[pkg.Name][sel.Sel.Name] ||
					strings.HasPrefix(sel.Sel.Name, "MatchString") || strings.HasPrefix(sel.Sel.Name, "FindString")
				if !matcher {
					return true
				}
				for _, a := range n.Args {
					if isText(a) {
						report(n, "matches on an error's text with "+sel.Sel.Name)
						break
					}
				}
			}
			return true
		})
	}
	return out
}

// TestNoErrorTextMatching fails where a package branches on err.Error().
func TestNoErrorTextMatching(t *testing.T) {
	fset, files := parseTree(t)
	var bad []string
	for _, sf := range files {
		bad = append(bad, errorTextMatches(fset, sf.file)...)
	}
	for _, b := range bad {
		t.Errorf("%s: use errors.Is/errors.As (errcode kinds, config.Problem keys), not the text", b)
	}
}

// yamlField is one field of a struct with a yaml key.
type yamlField struct{ name, typ, key string }

// configStruct is a struct type with yaml keys, or (plain) one without
// any, whose fields are then listed with key "".
type configStruct struct {
	pkg, name, pos string
	plain          bool
	fields         map[yamlField]bool
}

// configStructs lists the struct types of f: those that carry yaml keys,
// and the plain ones (no yaml key, every named field listed).
func configStructs(fset *token.FileSet, sf sourceFile) []configStruct {
	var out []configStruct
	ast.Inspect(sf.file, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok {
			return true
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			return true
		}
		cs := configStruct{pkg: sf.dir, name: ts.Name.Name, pos: fset.Position(ts.Pos()).String(), fields: map[yamlField]bool{}}
		plain := configStruct{pkg: cs.pkg, name: cs.name, pos: cs.pos, plain: true, fields: map[yamlField]bool{}}
		for _, f := range st.Fields.List {
			for _, id := range f.Names {
				plain.fields[yamlField{id.Name, types(f.Type), ""}] = true
			}
			if f.Tag == nil || len(f.Names) == 0 {
				continue
			}
			tag := reflect.StructTag(strings.Trim(f.Tag.Value, "`"))
			key, _, _ := strings.Cut(tag.Get("yaml"), ",")
			if key == "" || key == "-" {
				continue
			}
			typ := types(f.Type)
			for _, id := range f.Names {
				cs.fields[yamlField{id.Name, typ, key}] = true
			}
		}
		switch {
		case len(cs.fields) > 0:
			out = append(out, cs)
		case len(plain.fields) > 0 && !hasTag(st, "yaml"):
			out = append(out, plain)
		}
		return true
	})
	return out
}

// hasTag reports whether a field of st has a struct tag of key.
func hasTag(st *ast.StructType, key string) bool {
	for _, f := range st.Fields.List {
		if f.Tag != nil {
			if _, ok := reflect.StructTag(strings.Trim(f.Tag.Value, "`")).Lookup(key); ok {
				return true
			}
		}
	}
	return false
}

// types prints a field's type expression ("time.Duration", "[]string").
func types(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return types(e.X) + "." + e.Sel.Name
	case *ast.StarExpr:
		return "*" + types(e.X)
	case *ast.ArrayType:
		return "[]" + types(e.Elt)
	case *ast.MapType:
		return "map[" + types(e.Key) + "]" + types(e.Value)
	}
	return fmt.Sprintf("%T", e)
}

// mirrored reports whether a and b share enough yaml fields (same field
// name, type and key) to be one config written twice.
// A plain struct (no yaml keys) mirrors a config struct when it holds
// enough of its yaml fields by name and type alone: a section copied field
// by field to dodge an import (api.LiveLimits held live.Config's
// max_frame_bytes, max_messages_per_second and idle_timeout so).
func mirrored(a, b configStruct) (shared []string, ok bool) {
	if a.plain && b.plain {
		return nil, false
	}
	for f := range a.fields {
		if a.plain || b.plain {
			for g := range b.fields {
				if f.name == g.name && f.typ == g.typ {
					shared = append(shared, f.key+g.key)
				}
			}
			continue
		}
		if b.fields[f] {
			shared = append(shared, f.key)
		}
	}
	sort.Strings(shared)
	smaller := min(len(a.fields), len(b.fields))
	return shared, len(shared) >= 3 && 2*len(shared) >= smaller
}

// TestNoMirroredConfig fails where two packages declare the same config
// section: each module owns its Config, and whoever needs it holds that
// type (package app holds api.Config beside daemon.Config).
func TestNoMirroredConfig(t *testing.T) {
	fset, files := parseTree(t)
	var all []configStruct
	for _, sf := range files {
		all = append(all, configStructs(fset, sf)...)
	}
	for i, a := range all {
		for _, b := range all[i+1:] {
			if a.pkg == b.pkg || (a.plain || b.plain) && (outsideLayers(filepath.ToSlash(a.pkg)) || outsideLayers(filepath.ToSlash(b.pkg))) {
				continue // a test or tool may hold its own copy of a few settings (bench/internal/psbatch's Model)
			}
			if shared, ok := mirrored(a, b); ok {
				t.Errorf("%s (%s) and %s (%s) mirror each other's yaml keys %v: hold one package's Config instead",
					a.name, a.pos, b.name, b.pos, shared)
			}
		}
	}
}

// TestCheckersFind keeps the checks honest: each finds the pattern it
// forbids in a snippet of the code issue #15 removed.
func TestCheckersFind(t *testing.T) {
	src := `package p
func a(err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, "x") { return "" }
	switch err.Error() { case "y": }
	return strings.TrimPrefix(err.Error(), ErrX.Error()+": ")
}
func b(err error) bool { return err.Error() == "z" }
func c(err error) string { return "shown: " + err.Error() } // fine: shown, not matched
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := errorTextMatches(fset, f); len(got) != 4 {
		t.Errorf("found %d matches on error text, want 4: %v", len(got), got)
	}
	cfgA := configStruct{pkg: "daemon", fields: map[yamlField]bool{
		{"URL", "string", "url"}: true, {"Model", "string", "model"}: true, {"Timeout", "time.Duration", "timeout"}: true, {"Budget", "time.Duration", "budget"}: true}}
	cfgB := configStruct{pkg: "llm", fields: map[yamlField]bool{
		{"URL", "string", "url"}: true, {"Model", "string", "model"}: true, {"Timeout", "time.Duration", "timeout"}: true,
		{"Budget", "time.Duration", "budget"}: true, {"Backoff", "time.Duration", "backoff"}: true}}
	if _, ok := mirrored(cfgA, cfgB); !ok {
		t.Error("LLMConfig-like mirror not found")
	}
	live := configStruct{pkg: "daemon/live", fields: map[yamlField]bool{{"Capacity", "int", "capacity"}: true,
		{"IdleTimeout", "time.Duration", "idle_timeout"}: true, {"MaxFrameBytes", "int", "max_frame_bytes"}: true,
		{"MaxMessagesPerSecond", "int", "max_messages_per_second"}: true, {"TokenTTL", "time.Duration", "token_ttl"}: true}}
	limits := configStruct{pkg: "api", plain: true, fields: map[yamlField]bool{{"MaxFrameBytes", "int", ""}: true,
		{"MaxMessagesPerSecond", "int", ""}: true, {"IdleTimeout", "time.Duration", ""}: true}}
	if _, ok := mirrored(limits, live); !ok {
		t.Error("LiveLimits-like mirror (a plain struct of a section's fields) not found")
	}
	if _, ok := mirrored(limits, limits); ok {
		t.Error("two plain structs taken for a config mirror")
	}
}
