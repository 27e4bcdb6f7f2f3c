package main

import (
	"strings"
	"testing"
	"time"
)

// TestRun: a failed test's output and the package lines are printed, the
// passing tests' output is not, the slowest tests and a package past half
// its timeout are listed, and a failure sets the exit code.
func TestRun(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"quiet line\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestA","Elapsed":3.5}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:9: boom\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestB","Elapsed":1}`,
		`{"Action":"output","Package":"p","Output":"FAIL\tp\t700.1s\n"}`,
		`{"Action":"fail","Package":"p","Elapsed":700.1}`,
		`{"Action":"output","Package":"q","Output":"ok  \tq\t0.1s\n"}`,
		`{"Action":"pass","Package":"q","Elapsed":0.1}`,
		`not json`,
	}, "\n")
	var out strings.Builder
	code := run(strings.NewReader(in), &out, 20*time.Minute, 5)
	got := out.String()
	for _, want := range []string{"--- FAIL: p TestB (1.00s)\n    b_test.go:9: boom\n", "FAIL\tp\t700.1s", "ok  \tq\t0.1s",
		"3.5 s  p TestA", "700.1 s (58%) OVER HALF ITS TIMEOUT  p", "not json"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "quiet line") || code != 1 {
		t.Errorf("code %d, output:\n%s", code, got)
	}
}

// TestLabelled: a labelled run's packages carry the label.
func TestLabelled(t *testing.T) {
	in := `{"Action":"pass","Package":"m/e2e","Elapsed":9}` + "\n" + `not json` + "\n"
	var out strings.Builder
	run(labelled(strings.NewReader(in), "doors"), &out, time.Minute, 5)
	if !strings.Contains(out.String(), "m/e2e (doors)") || !strings.Contains(out.String(), "not json") {
		t.Errorf("output:\n%s", out.String())
	}
}
