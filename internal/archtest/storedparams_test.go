package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// storedParamsDecodes finds calls json.Unmarshal(x.Params, ...) in f: a
// stored job's request_params decoded without params.Stored*'s checks.
func storedParamsDecodes(fset *token.FileSet, f *ast.File) []string {
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		fn, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || fn.Sel.Name != "Unmarshal" {
			return true
		}
		if pkg, ok := fn.X.(*ast.Ident); !ok || pkg.Name != "json" {
			return true
		}
		if arg, ok := call.Args[0].(*ast.SelectorExpr); ok && arg.Sel.Name == "Params" {
			out = append(out, fset.Position(call.Pos()).String())
		}
		return true
	})
	return out
}

// TestStoredParamsDecodedOnce: outside package params, no code decodes a
// job's stored request_params itself; every reader calls
// params.StoredPreRecorded or params.StoredLive (the request's decoder
// and checks).
func TestStoredParamsDecodedOnce(t *testing.T) {
	fset, files := parseTree(t)
	for _, sf := range files {
		if filepath.ToSlash(sf.dir) == "params" {
			continue
		}
		for _, at := range storedParamsDecodes(fset, sf.file) {
			t.Errorf("%s: decode a job's stored params with params.StoredPreRecorded or params.StoredLive", at)
		}
	}
	// The check finds what it forbids.
	src := "package p\nfunc f(j *Job) { var p X; json.Unmarshal(j.Params, &p); json.Unmarshal(j.Result, &p) }\n"
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := storedParamsDecodes(fset, f); len(got) != 1 {
		t.Errorf("the check found %d decodes of stored params in its example, want 1", len(got))
	}
}
