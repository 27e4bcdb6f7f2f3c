package config

import (
	"errors"
	"slices"
	"testing"
	"time"
)

type inner struct {
	N int `yaml:"n"`
}

func (c *inner) SetDefaults() {
	if c.N == 0 {
		c.N = 7
	}
}

func (c inner) Validate() error {
	if c.N < 0 {
		return Errorf("n", "must be 0 or more, not %d", c.N)
	}
	return nil
}

type Shared struct {
	Grace time.Duration `yaml:"grace"`
}

func (c *Shared) SetDefaults() {
	if c.Grace == 0 {
		c.Grace = time.Second
	}
}

func (c Shared) Validate() error {
	if c.Grace < 0 {
		return Errorf("grace", "must be 0 or more")
	}
	return nil
}

// withArg has a Validate that needs another section's value: the walk
// leaves it to its parent.
type withArg struct {
	X int `yaml:"x"`
}

func (withArg) Validate(string) error { return errors.New("called") }

type walkRoot struct {
	Own    string `yaml:"own"`
	Shared `yaml:",inline"`
	A      inner   `yaml:"a"`
	B      inner   // key "b"
	Hidden inner   `yaml:"-"`
	P      *inner  `yaml:"p"` // a pointer is a leaf, not a section
	W      withArg `yaml:"w"`
	D      time.Duration
}

// TestSectionWalk: every section field is defaulted and validated under
// its key, an inline one under its parent's keys; "-" fields, pointers,
// scalars and a Validate with arguments are not walked.
func TestSectionWalk(t *testing.T) {
	var r walkRoot
	SetSectionDefaults(&r)
	if r.A.N != 7 || r.B.N != 7 || r.Grace != time.Second {
		t.Errorf("defaults: a.n %d, b.n %d, grace %s; want 7, 7, 1s", r.A.N, r.B.N, r.Grace)
	}
	if r.Hidden.N != 0 || r.P != nil {
		t.Errorf("walked a yaml \"-\" field (%d) or a pointer (%v)", r.Hidden.N, r.P)
	}
	again := r
	SetSectionDefaults(&again)
	if again != r {
		t.Error("a second walk changed the defaults")
	}
	if err := ValidateSections(&r); err != nil {
		t.Errorf("valid sections: %v", err)
	}
	r.A.N, r.B.N, r.Hidden.N, r.Grace = -1, -2, -3, -time.Second
	var keys []string
	for _, p := range Problems(ValidateSections(&r)) {
		keys = append(keys, p.Key)
	}
	if want := []string{"grace", "a.n", "b.n"}; !slices.Equal(keys, want) {
		t.Errorf("problems under %v, want %v", keys, want)
	}
}
