package config

import (
	"encoding"
	"reflect"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// field is one YAML key of a struct: its name, its index path from the
// struct (through inline structs) and its type.
type field struct {
	name  string
	index []int
	typ   reflect.Type
}

// fields lists the YAML keys of struct t as yaml.v3 names them: the yaml
// tag's name, else the lower-cased field name; "-" and unexported fields
// skipped; an ",inline" struct's keys as t's own. This is the one reading
// of yaml tags that Keys, Set and Check share.
func fields(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if slices.Contains(strings.Split(opts, ","), "inline") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for _, in := range fields(ft) {
					in.index = append([]int{i}, in.index...)
					out = append(out, in)
				}
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name) // yaml.v3's default
		}
		out = append(out, field{name: name, index: []int{i}, typ: f.Type})
	}
	return out
}

// decodesItself says whether YAML decodes t from a scalar of its own (a
// duration, netip.Prefix, ...) rather than key by key.
func decodesItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t == reflect.TypeFor[time.Duration]() ||
		p.Implements(reflect.TypeFor[yaml.Unmarshaler]()) || p.Implements(reflect.TypeFor[encoding.TextUnmarshaler]())
}

// section says whether a value of t is a mapping of keys of its own (a
// struct walked key by key) rather than a leaf.
func section(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && !decodesItself(t)
}

// Key is one settable key of a root struct: a leaf of the YAML tree.
type Key struct {
	// Path is the dotted YAML path, e.g. "limits.max_upload_bytes".
	Path string
	// Env is the environment variable that sets it, e.g.
	// "EARSHOT_LIMITS_MAX_UPLOAD_BYTES".
	Env   string
	index []int
	typ   reflect.Type
}

// Keys lists every settable key of the struct type t in field order. A
// leaf is a scalar (string, number, bool, duration, CIDR), a list or a map;
// lists and maps are set whole.
func Keys(t reflect.Type) []Key {
	var out []Key
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for _, f := range fields(t) {
			path := join(prefix, f.name)
			idx := append(slices.Clone(index), f.index...)
			if section(f.typ) {
				walk(f.typ, path, idx)
				continue
			}
			out = append(out, Key{Path: path, Env: EnvName(path), index: idx, typ: f.typ})
		}
	}
	walk(t, "", nil)
	return out
}
