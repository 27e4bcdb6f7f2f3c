// Command testsummary reads `go test -json` on stdin and prints what a
// person reads of a test run: each package's ok/FAIL line, build errors,
// the output of every failed test (its last maxLines lines), and at the end
// the slowest tests and each package's time against the run's -timeout
// (make test runs it; CI's log ends with them). It exits 1 when a test or
// a package failed.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// maxLines bounds the output kept of one test (its last lines).
const maxLines = 300

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output
	Test       string
	Elapsed    float64
	Output     string
}

type timing struct {
	name    string
	seconds float64
}

// usage: testsummary [-timeout D] [-slowest N] [[LABEL=]FILE ...]: the
// files of several go test runs (stdin when none); a labelled file's
// packages are named "package (LABEL)", as one package run twice with other
// tests (make test runs the e2e package so) is two test processes.
func main() {
	timeout := flag.Duration("timeout", 0, "the -timeout go test ran with: each package's time is shown against it")
	slowest := flag.Int("slowest", 15, "how many of the slowest tests to list")
	flag.Parse()
	var in io.Reader = os.Stdin
	if flag.NArg() > 0 {
		var inputs []io.Reader
		for _, arg := range flag.Args() {
			label, path, ok := strings.Cut(arg, "=")
			if !ok {
				label, path = "", arg
			}
			f, err := os.Open(path)
			if err != nil {
				fmt.Fprintln(os.Stderr, "testsummary:", err)
				os.Exit(2)
			}
			defer f.Close()
			inputs = append(inputs, labelled(f, label))
		}
		in = io.MultiReader(inputs...)
	}
	os.Exit(run(in, os.Stdout, *timeout, *slowest))
}

// labelled is r with " (label)" added to each event's package name; r
// itself when label is empty.
func labelled(r io.Reader, label string) io.Reader {
	if label == "" {
		return r
	}
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			line := sc.Bytes()
			var e map[string]any
			if json.Unmarshal(line, &e) == nil {
				if p, ok := e["Package"].(string); ok {
					e["Package"] = p + " (" + label + ")"
					line, _ = json.Marshal(e)
				}
			}
			pw.Write(append(line, '\n'))
		}
		pw.CloseWithError(sc.Err())
	}()
	return pr
}

func run(in io.Reader, out io.Writer, timeout time.Duration, slowest int) int {
	outputs := map[string][]string{} // package + test -> its last lines
	var tests, packages []timing
	failed := false
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			fmt.Fprintln(out, sc.Text()) // not an event: go test's own words
			continue
		}
		key := e.Package + " " + e.Test
		switch {
		case e.Action == "build-output":
			fmt.Fprint(out, e.Output)
		case e.Action == "output" && e.Test == "":
			if l := strings.TrimSpace(e.Output); strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "FAIL") ||
				strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "?") || strings.HasPrefix(l, "---") {
				fmt.Fprint(out, e.Output)
			}
		case e.Action == "output":
			lines := append(outputs[key], e.Output)
			if len(lines) > maxLines {
				lines = lines[len(lines)-maxLines:]
			}
			outputs[key] = lines
		case e.Action == "fail" && e.Test != "":
			failed = true
			fmt.Fprintf(out, "--- FAIL: %s %s (%.2fs)\n%s", e.Package, e.Test, e.Elapsed, strings.Join(outputs[key], ""))
			delete(outputs, key)
		case e.Action == "fail":
			failed = true
			packages = append(packages, timing{e.Package, e.Elapsed})
		case e.Action == "pass" && e.Test != "":
			if !strings.Contains(e.Test, "/") {
				tests = append(tests, timing{e.Package + " " + e.Test, e.Elapsed})
			}
			delete(outputs, key)
		case e.Action == "pass":
			packages = append(packages, timing{e.Package, e.Elapsed})
		case e.Action == "skip" && e.Test != "":
			delete(outputs, key)
		}
	}
	bySeconds := func(a, b timing) int { return cmp.Compare(b.seconds, a.seconds) }
	slices.SortFunc(tests, bySeconds)
	slices.SortFunc(packages, bySeconds)
	fmt.Fprintf(out, "\n=== the %d slowest tests ===\n", min(slowest, len(tests)))
	for _, t := range tests[:min(slowest, len(tests))] {
		fmt.Fprintf(out, "%8.1f s  %s\n", t.seconds, t.name)
	}
	fmt.Fprintf(out, "\n=== packages by time (of -timeout %s) ===\n", timeout)
	for _, p := range packages[:min(slowest, len(packages))] {
		share := ""
		if timeout > 0 {
			pct := 100 * p.seconds / timeout.Seconds()
			share = fmt.Sprintf(" (%.0f%%)", pct)
			if pct > 50 {
				share += " OVER HALF ITS TIMEOUT"
			}
		}
		fmt.Fprintf(out, "%8.1f s%s  %s\n", p.seconds, share, p.name)
	}
	if failed {
		return 1
	}
	return 0
}
