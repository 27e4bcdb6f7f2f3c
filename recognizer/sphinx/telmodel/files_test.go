package telmodel

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestReadTSV(t *testing.T) {
	p := filepath.Join(t.TempDir(), "manifest.tsv")
	if err := os.WriteFile(p, []byte("file\ttext\na.flac\tone two\n\nb.flac\tthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := ReadTSV(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || !slices.Equal(rows[0], []string{"a.flac", "one two"}) || !slices.Equal(rows[1], []string{"b.flac", "three"}) {
		t.Fatalf("rows %q", rows)
	}
}

func TestFeatParams(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full")
	if err := os.WriteFile(full, []byte("-feat 1s_c_d_dd\n-svspec 0-12/13-25/26-38\n-cmn live\n-agc none\n-varnorm no\n-lowerf 130\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := FeatParams(full)
	if err != nil {
		t.Fatal(err)
	}
	if m["-cmn"] != "live" || m["-lowerf"] != "130" {
		t.Fatalf("params %v", m)
	}
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("-feat 1s_c_d_dd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := FeatParams(short); err == nil {
		t.Fatal("feat.params without -svspec, -cmn, -agc, -varnorm accepted")
	}
}
