package archtest

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// importRules are the import rules of ARCHITECTURE.md ("Layers and import
// direction"): no package of from depends on a package of to, directly or
// through others, in its non-test code (a package's tests may).
var importRules = []struct {
	from, to []string
	why      string
}{
	{[]string{"recognizer/pipeline"}, []string{"daemon"},
		"the pipeline never imports the daemon (recognizer/pipeline/doc.go)"},
	{[]string{"daemon"}, []string{"api", "ingest/sip", "ingest/webrtc"},
		"the daemon imports no door: cmd/earshotd joins them (daemon/doc.go)"},
	{[]string{"quota", "admin", "metrics", "retention", "callback", "audit", "ingest/fetch"}, []string{"daemon"},
		"a module the daemon runs declares what it needs of it as an interface"},
	{[]string{"api"}, []string{"daemon", "daemon/live", "recognizer/pipeline", "recognizer/sphinx", "store/bolt", "store/postgres", "go.etcd.io/bbolt"},
		"the HTTP door depends on the interfaces it declares (api/server.go, api/live.go), errcode, params, store's contract, ingest's door contract and transcript's result shapes: no job service, engine or backend (issue 39)"},
	{[]string{"daemon/live"}, []string{"daemon"},
		"daemon/live declares what it needs as Store, Recordings, Signals and Cluster (daemon/live/doc.go)"},
	{[]string{"store/sealed"}, []string{"store/bolt", "store/postgres"},
		"the sealing layer wraps any store.Store: it names no backend (store/sealed/doc.go, issue 40)"},
	{[]string{"store"}, []string{"store/bolt", "store/postgres", "store/sealed"},
		"store is the contract only: interfaces, domain types, errors, the record rules (store/doc.go, issue 39)"},
	{[]string{"daemon", "daemon/live", "api", "ingest/sip", "ingest/webrtc", "callback", "retention", "quota", "admin", "metrics", "audit", "ingest/fetch"},
		[]string{"store/bolt", "store/postgres", "store/sealed"},
		"only the composition root names a store backend: app.OpenStore opens it, the rest hold a store.Store (app/store.go, issue 39)"},
}

// pendingRules are dependencies importRules forbids that the tree still
// has, each with the change that removes it: TestImportDirection logs them
// instead of failing, and fails once one is gone, so that its line here
// goes too and the rule holds from then on. None now (api's bbolt went
// with the store split).
var pendingRules = map[[2]string]string{}

// modulePath is the module's path, from go.mod's module line.
func modulePath(t *testing.T) string {
	t.Helper()
	f, err := os.Open(filepath.Join(root(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if p, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(p), `"`)
		}
	}
	t.Fatal("go.mod has no module line")
	return ""
}

// importGraph is the module's non-test import graph: for each package
// (its directory from the module root), the module's packages it imports
// and the third-party ones (by their import path: "go.etcd.io/bbolt";
// their own imports are not followed), each with the first file that
// imports it.
type importGraph map[string]map[string]string

func readImports(t *testing.T) importGraph {
	t.Helper()
	mod := modulePath(t) + "/"
	_, files := parseTree(t)
	g := importGraph{}
	for _, sf := range files {
		pkg := filepath.ToSlash(sf.dir)
		if g[pkg] == nil {
			g[pkg] = map[string]string{}
		}
		for _, im := range sf.file.Imports {
			path, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				t.Fatalf("%s: import %s: %v", sf.rel, im.Path.Value, err)
			}
			dep, ok := strings.CutPrefix(path, mod)
			if !ok && thirdParty(path) {
				dep, ok = path, true
			}
			if _, seen := g[pkg][dep]; ok && !seen {
				g[pkg][dep] = filepath.ToSlash(sf.rel)
			}
		}
	}
	return g
}

// thirdParty reports whether an import path is another module's, not the
// standard library's: its first element has a dot.
func thirdParty(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return strings.Contains(first, ".")
}

// chain returns how from depends on to, one hop a step ("daemon/live/x.go
// imports store/postgres"), the shortest way; nil when it does not.
func (g importGraph) chain(from, to string) []string {
	via := map[string]string{from: ""} // package -> the package that reached it first
	queue := []string{from}
	for len(queue) > 0 {
		pkg := queue[0]
		queue = queue[1:]
		if pkg == to {
			var hops []string
			for p := to; p != from; p = via[p] {
				hops = append([]string{g[via[p]][p] + " imports " + p}, hops...)
			}
			return hops
		}
		for dep := range g[pkg] {
			if _, seen := via[dep]; !seen {
				via[dep] = pkg
				queue = append(queue, dep)
			}
		}
	}
	return nil
}

// TestImportDirection fails where a package depends on one that
// ARCHITECTURE.md's import direction forbids it (importRules).
func TestImportDirection(t *testing.T) {
	g := readImports(t)
	for _, r := range importRules {
		for _, from := range r.from {
			if g[from] == nil {
				t.Errorf("no package %s: importRules names a package the tree no longer has", from)
				continue
			}
			for _, to := range r.to {
				hops := g.chain(from, to)
				until, pending := pendingRules[[2]string{from, to}]
				switch {
				case hops != nil && pending:
					t.Logf("pending: %s depends on %s until the %s: %s", from, to, until, strings.Join(hops, ", "))
				case hops != nil:
					t.Errorf("%s depends on %s: %s; %s", from, to, strings.Join(hops, ", "), r.why)
				case pending:
					t.Errorf("%s no longer depends on %s: remove its line from pendingRules (imports_test.go), so the rule holds", from, to)
				}
			}
		}
	}
}

// TestImportChain keeps TestImportDirection honest: it finds a dependency
// two hops away and none against the direction.
func TestImportChain(t *testing.T) {
	g := importGraph{
		"daemon/live":         {"recognizer/pipeline": "daemon/live/service.go"},
		"recognizer/pipeline": {"store/postgres": "recognizer/pipeline/x.go"},
		"store/postgres":      {},
	}
	want := "daemon/live/service.go imports recognizer/pipeline, recognizer/pipeline/x.go imports store/postgres"
	if got := strings.Join(g.chain("daemon/live", "store/postgres"), ", "); got != want {
		t.Errorf("chain = %q, want %q", got, want)
	}
	if hops := g.chain("store/postgres", "daemon/live"); hops != nil {
		t.Errorf("chain against the direction = %v, want none", hops)
	}
	g = importGraph{"api": {"store": "api/list.go"}, "store": {"go.etcd.io/bbolt": "store/db.go"}}
	want = "api/list.go imports store, store/db.go imports go.etcd.io/bbolt"
	if got := strings.Join(g.chain("api", "go.etcd.io/bbolt"), ", "); got != want {
		t.Errorf("chain to another module = %q, want %q", got, want)
	}
	for path, want := range map[string]bool{"go.etcd.io/bbolt": true, "github.com/valyala/fasthttp": true, "net/http": false, "encoding/json": false} {
		if thirdParty(path) != want {
			t.Errorf("thirdParty(%s) = %v, want %v", path, !want, want)
		}
	}
}
