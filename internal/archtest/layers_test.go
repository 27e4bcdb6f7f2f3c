package archtest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// layerTable reads the layer table of ARCHITECTURE.md ("Layers and import
// direction"): for each row, top first, its name and package patterns (a
// pattern ending in /* names the packages under a directory).
func layerTable(t *testing.T) (names []string, patterns [][]string) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(root(t), "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "## Layers and import direction")
	if !ok {
		t.Fatal(`ARCHITECTURE.md has no "## Layers and import direction"`)
	}
	rest, _, _ = strings.Cut(rest, "\n## ")
	code := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(rest, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.TrimSpace(cells[1]) == "layer" || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") {
			continue
		}
		var pats []string
		for _, m := range code.FindAllStringSubmatch(cells[2], -1) {
			pats = append(pats, m[1])
		}
		names = append(names, strings.TrimSpace(cells[1]))
		patterns = append(patterns, pats)
	}
	if len(names) == 0 {
		t.Fatal("ARCHITECTURE.md's layer table has no rows")
	}
	return names, patterns
}

// layerOf is the row of pkg in the table, -1 when none names it; the
// longest matching pattern wins.
func layerOf(pkg string, patterns [][]string) int {
	row, best := -1, -1
	for i, pats := range patterns {
		for _, p := range pats {
			dir, glob := strings.CutSuffix(p, "/*")
			if (glob && strings.HasPrefix(pkg, dir+"/") || !glob && pkg == p) && len(p) > best {
				row, best = i, len(p)
			}
		}
	}
	return row
}

// outsideLayers are the packages the table leaves out: tests and tools,
// which may import anything and which no layered package imports.
func outsideLayers(pkg string) bool {
	return pkg == "e2e" || strings.HasPrefix(pkg, "bench/") || pkg == "cmd/telmodel" || pkg == "internal/archtest" || pkg == "internal/testsummary" ||
		testHelper(pkg)
}

// testHelper reports whether pkg is a test helper package: one whose name
// ends in "test" (codectest, pgtest, storetest, recognizertest, addonstest,
// pipelinetest) or one under such a package (store/storetest/memstore, the
// in-memory store of the daemon's unit tests).
func testHelper(pkg string) bool {
	for _, elem := range strings.Split(pkg, "/") {
		if strings.HasSuffix(elem, "test") {
			return true
		}
	}
	return false
}

// TestLayers: every package is in a row of ARCHITECTURE.md's layer table
// (or is a test or tool package), imports only packages of its own row or
// rows below it, never a door of its own row (the doors reach each other
// through nothing), and never a test or tool package.
func TestLayers(t *testing.T) {
	names, patterns := layerTable(t)
	for _, v := range layerViolations(readImports(t), names, patterns) {
		t.Error(v)
	}
}

// layerViolations lists what TestLayers forbids in g.
func layerViolations(g importGraph, names []string, patterns [][]string) []string {
	var out []string
	var pkgs []string
	for pkg := range g {
		pkgs = append(pkgs, pkg)
	}
	sort.Strings(pkgs)
	doors := slices.Index(names, "doors")
	for _, pkg := range pkgs {
		if outsideLayers(pkg) {
			continue
		}
		row := layerOf(pkg, patterns)
		if row < 0 {
			out = append(out, pkg+" is in no row of ARCHITECTURE.md's layer table")
			continue
		}
		for dep, file := range g[pkg] {
			if thirdParty(dep) {
				continue // another module's package: the table does not list them
			}
			switch to := layerOf(dep, patterns); {
			case outsideLayers(dep):
				out = append(out, fmt.Sprintf("%s imports %s, a test or tool package", file, dep))
			case to < 0:
				// reported as its own package
			case to < row:
				out = append(out, fmt.Sprintf("%s imports %s: %s (%s) is above %s (%s) in ARCHITECTURE.md's layer table", file, dep, dep, names[to], pkg, names[row]))
			case to == row && row == doors && dep != pkg:
				out = append(out, fmt.Sprintf("%s imports %s: a door imports no other door", file, dep))
			}
		}
	}
	return out
}

// TestLayerViolations keeps TestLayers honest: on a made-up table and
// graph it finds an upward import, a door importing a door, a layered
// package importing a test helper and a package in no row, and nothing
// else.
func TestLayerViolations(t *testing.T) {
	names := []string{"doors", "job service", "leaves"}
	patterns := [][]string{{"api", "ingest/sip"}, {"daemon"}, {"params"}}
	g := importGraph{
		"api":        {"daemon": "api/a.go", "ingest/sip": "api/b.go"},
		"daemon":     {"params": "daemon/d.go", "api": "daemon/e.go", "store/storetest/memstore": "daemon/f.go"},
		"params":     {"store/storetest": "params/p.go"},
		"ingest/sip": {},
		"stray":      {},
		"e2e":        {"api": "e2e/x_test.go"},
	}
	got := layerViolations(g, names, patterns)
	want := []string{
		"api/b.go imports ingest/sip: a door imports no other door",
		"daemon/e.go imports api: api (doors) is above daemon (job service) in ARCHITECTURE.md's layer table",
		"daemon/f.go imports store/storetest/memstore, a test or tool package",
		"params/p.go imports store/storetest, a test or tool package",
		"stray is in no row of ARCHITECTURE.md's layer table",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestLayerOf keeps TestLayers honest on a made-up table.
func TestLayerOf(t *testing.T) {
	patterns := [][]string{{"cmd/earshotd"}, {"api", "ingest/sip"}, {"recognizer", "recognizer/addons/*"}, {"ingest", "ingest/codec/*"}}
	for pkg, want := range map[string]int{"api": 1, "recognizer/addons/ner": 2, "recognizer": 2, "ingest/codec/g722": 3, "ingest": 3,
		"ingest/sip": 1, "ingest/rtp": -1, "recognizer/addons": -1, "daemon": -1} {
		if got := layerOf(pkg, patterns); got != want {
			t.Errorf("layerOf(%s) = %d, want %d", pkg, got, want)
		}
	}
}
