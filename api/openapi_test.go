package api

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// notInOpenAPI are the routes the OpenAPI document leaves out: the browser
// capture page (HTML, not API; docs/PROTOCOL.md mentions it).
var notInOpenAPI = []string{"GET /console", "GET /console/{file}"}

// TestOpenAPIRoutes compares the routes server.go registers with the
// operations of openapi.json, both ways: a new route without its
// documentation, or a documented operation the server does not serve,
// fails naming it.
func TestOpenAPIRoutes(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "server.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	methods := []string{"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"}
	served := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 2 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		lit, isLit := call.Args[0].(*ast.BasicLit)
		if !ok || !isLit || lit.Kind != token.STRING || !slices.Contains(methods, sel.Sel.Name) {
			return true
		}
		path, err := strconv.Unquote(lit.Value)
		if err == nil && strings.HasPrefix(path, "/") {
			served[sel.Sel.Name+" "+path] = true
		}
		return true
	})
	if len(served) < 20 {
		t.Fatalf("found only %d routes in server.go: %v", len(served), served)
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1.") {
		t.Errorf("openapi.json says openapi %q, want 3.1.x", doc.OpenAPI)
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths {
		for m := range item {
			if m != "parameters" {
				documented[strings.ToUpper(m)+" "+path] = true
			}
		}
	}
	for r := range served {
		if !documented[r] && !slices.Contains(notInOpenAPI, r) {
			t.Errorf("server.go serves %s; document it in api/openapi.json", r)
		}
	}
	for r := range documented {
		if !served[r] {
			t.Errorf("api/openapi.json documents %s, which server.go does not serve", r)
		}
	}
}
