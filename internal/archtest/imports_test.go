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
	{[]string{"api"}, []string{"daemon"},
		"the HTTP door reaches the job service only through the interfaces it declares (api/server.go, issue 39)"},
	{[]string{"daemon/live"}, []string{"daemon"},
		"daemon/live declares what it needs as Store, Recordings, Signals and Cluster (daemon/live/doc.go)"},
	{[]string{"store"}, []string{"store/bolt", "store/postgres"},
		"store is the contract only: interfaces, domain types, errors, the record rules (store/doc.go, issue 39)"},
	{[]string{"daemon", "daemon/live", "api", "ingest/sip", "ingest/webrtc", "callback", "retention", "quota", "admin", "metrics", "audit", "ingest/fetch"},
		[]string{"store/bolt", "store/postgres"},
		"only the composition root names a store backend: app.OpenStore opens it, the rest hold a store.Store (app/store.go, issue 39)"},
}

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
// (its directory from the module root), the module's packages it imports,
// each with the first file that imports it.
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
			if _, seen := g[pkg][dep]; ok && !seen {
				g[pkg][dep] = filepath.ToSlash(sf.rel)
			}
		}
	}
	return g
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
				if hops := g.chain(from, to); hops != nil {
					t.Errorf("%s depends on %s: %s; %s", from, to, strings.Join(hops, ", "), r.why)
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
}
