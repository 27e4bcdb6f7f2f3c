package config

import (
	"errors"
	"fmt"
	"sort"
)

// Problem is one thing wrong with one config key, as Validate reports it
// and config check prints it.
type Problem struct {
	// Key is the dotted YAML key ("limits.max_queued", "engines.remote[0].url");
	// "" when the problem is not about one key.
	Key string
	// Line is the 1-based line of the key in the file, 0 when unknown.
	Line int
	// Msg says what is wrong, without the key.
	Msg string
}

func (p *Problem) Error() string {
	if p.Key == "" {
		return p.Msg
	}
	return p.Key + ": " + p.Msg
}

// Errorf is a Problem of key.
func Errorf(key, format string, a ...any) *Problem {
	return &Problem{Key: key, Msg: fmt.Sprintf(format, a...)}
}

// Under places every problem of err (one error or a join of them) below
// prefix, for a section that validates itself without knowing where it
// sits: key "url" under "engines.remote[0]" is "engines.remote[0].url". An
// error that is no *Problem becomes one of key prefix. nil stays nil.
func Under(prefix string, err error) error {
	ps := Problems(err)
	if len(ps) == 0 {
		return nil
	}
	errs := make([]error, len(ps))
	for i, p := range ps {
		q := *p
		q.Key = join(prefix, p.Key)
		errs[i] = &q
	}
	return errors.Join(errs...)
}

// Problems flattens err (errors.Join, possibly nested) into its problems,
// in order; an error that is no *Problem is one of key "" with its text as
// the message.
func Problems(err error) []*Problem {
	if err == nil {
		return nil
	}
	var p *Problem
	if errors.As(err, &p) && p == err {
		return []*Problem{p}
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*Problem
		for _, e := range j.Unwrap() {
			out = append(out, Problems(e)...)
		}
		return out
	}
	if errors.As(err, &p) {
		return []*Problem{p}
	}
	return []*Problem{{Msg: err.Error()}}
}

// Sorted is err's problems ordered by key, joined again (for sections
// whose checks run in map order).
func Sorted(err error) error {
	ps := Problems(err)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Key < ps[j].Key })
	errs := make([]error, len(ps))
	for i, p := range ps {
		errs[i] = p
	}
	return errors.Join(errs...)
}

func join(prefix, key string) string {
	switch {
	case prefix == "":
		return key
	case key == "":
		return prefix
	case key[0] == '[':
		return prefix + key
	}
	return prefix + "." + key
}
