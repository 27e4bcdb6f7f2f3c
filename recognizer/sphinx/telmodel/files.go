package telmodel

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// ReadTSV reads a tab-separated manifest: its rows after the header line,
// blank lines skipped.
func ReadTSV(path string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for first := true; sc.Scan(); first = false {
		if first || sc.Text() == "" {
			continue
		}
		rows = append(rows, strings.Split(sc.Text(), "\t"))
	}
	return rows, sc.Err()
}

// FeatParams reads a model's feat.params ("-key value" lines); the
// front-end settings sphinxtrain's tools are given must all be there.
func FeatParams(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), " "); ok {
			m[k] = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, k := range []string{"-feat", "-svspec", "-cmn", "-agc", "-varnorm"} {
		if m[k] == "" {
			return nil, fmt.Errorf("%s: no %s", path, k)
		}
	}
	return m, nil
}
