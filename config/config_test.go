package config

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"
)

type Inner struct {
	URL     string        `yaml:"url"`
	Timeout time.Duration `yaml:"timeout"`
}

type sec struct {
	Inner `yaml:",inline"`
	Name  string `yaml:"name"`
}

type root struct {
	Workers int `yaml:"workers"`
	Sec     sec `yaml:"sec"`
	Hidden  int `yaml:"-"`
}

// TestKeysInline: an inline struct's keys are its parent's, and Set and
// Check reach them by the same path.
func TestKeysInline(t *testing.T) {
	var paths []string
	for _, k := range Keys(reflect.TypeFor[root]()) {
		paths = append(paths, k.Path)
	}
	if want := []string{"workers", "sec.url", "sec.timeout", "sec.name"}; !slices.Equal(paths, want) {
		t.Errorf("Keys = %v, want %v", paths, want)
	}
	var r root
	if err := Set(&r, "sec.timeout", "5s"); err != nil || r.Sec.Timeout != 5*time.Second {
		t.Errorf("Set inline key: %v, %v", err, r.Sec.Timeout)
	}
	lines, problems := Check([]byte("workers: 2\nsec:\n  url: x\n  timeout: soon\n  colour: red\n"), reflect.TypeFor[root]())
	if lines["sec.url"] != 3 || len(problems) != 2 || problems[0].Key != "sec.timeout" || problems[0].Line != 4 ||
		problems[1].Key != "sec.colour" || problems[1].Msg != "unknown key" {
		t.Errorf("Check = %v, %v", lines, problems)
	}
}

// TestUnder: problems of a section are placed below its key; an error that
// is no Problem becomes one of the section's key; nil stays nil.
func TestUnder(t *testing.T) {
	if Under("x", nil) != nil {
		t.Error("Under(nil) != nil")
	}
	err := Under("engines", errors.Join(Errorf("url", "empty"), Under("remote[0]", Errorf("model", "empty")), fmt.Errorf("odd")))
	var keys []string
	for _, p := range Problems(err) {
		keys = append(keys, p.Key)
	}
	if want := []string{"engines.url", "engines.remote[0].model", "engines"}; !slices.Equal(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
	if got := Problems(Sorted(err))[0].Key; got != "engines" {
		t.Errorf("Sorted first key %q", got)
	}
}
