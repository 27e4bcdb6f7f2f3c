package archtest

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// testFunc finds the top-level test functions of a _test.go file.
var testFunc = regexp.MustCompile(`(?m)^func (Test[A-Za-z0-9_]*)\(`)

// e2eDoors is the Makefile's E2E_DOORS: the e2e tests that run in a
// process of their own (make test runs them side by side with the rest,
// which it runs with -skip E2E_DOORS over every package).
func e2eDoors(t *testing.T) *regexp.Regexp {
	t.Helper()
	f, err := os.Open(filepath.Join(root(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "E2E_DOORS := "); ok {
			re, err := regexp.Compile(strings.TrimSpace(v))
			if err != nil {
				t.Fatalf("E2E_DOORS: %v", err)
			}
			return re
		}
	}
	t.Fatal("the Makefile has no E2E_DOORS := line")
	return nil
}

// TestE2EDoorsOnlyInE2E: no test outside e2e/ matches E2E_DOORS, or make
// test would skip it (its -skip applies to every package), and E2E_DOORS
// names some e2e test.
func TestE2EDoorsOnlyInE2E(t *testing.T) {
	doors := e2eDoors(t)
	top := root(t)
	matched := 0
	err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != top && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(top, path)
		inE2E := filepath.Dir(rel) == "e2e"
		for _, m := range testFunc.FindAllSubmatch(b, -1) {
			if !doors.Match(m[1]) {
				continue
			}
			if !inE2E {
				t.Errorf("%s: %s matches the Makefile's E2E_DOORS, so make test would skip it; rename it", rel, m[1])
			}
			matched++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if matched == 0 {
		t.Error("E2E_DOORS names no e2e test")
	}
}
