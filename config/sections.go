package config

import (
	"errors"
	"reflect"
	"slices"
	"strings"
)

// Defaulter is a section that fills its zero fields: its own keys and its
// own sections'. SetDefaults only fills zero fields, so calling it twice
// changes nothing.
type Defaulter interface{ SetDefaults() }

// Validator is a section that checks its keys without I/O, each problem a
// *Problem naming its key relative to the section.
type Validator interface{ Validate() error }

// SetSectionDefaults calls SetDefaults on every section of the struct v
// points to that has it, in field order: every field that is a mapping of
// keys of its own (a struct walked key by key, an inline one included).
// It is how a parent (app.Config, daemon.Config) defaults its sections,
// instead of naming each: a new section is defaulted by being a field. A
// parent whose own default reads a section's default calls that
// section's SetDefaults first.
func SetSectionDefaults(v any) {
	eachSection(v, func(_ string, s any) {
		if d, ok := s.(Defaulter); ok {
			d.SetDefaults()
		}
	})
}

// ValidateSections joins the problems of every section of the struct v
// points to that has Validate, in field order, each under the section's
// key (an inline section's keys are its parent's). A section whose check
// needs another's value has no Validate() of this form; its parent calls
// it.
func ValidateSections(v any) error {
	var errs []error
	eachSection(v, func(key string, s any) {
		if c, ok := s.(Validator); ok {
			errs = append(errs, Under(key, c.Validate()))
		}
	})
	return errors.Join(errs...)
}

// eachSection calls fn with the key and address of every section field of
// the struct v points to ("" for an inline one), as fields reads the yaml
// tags.
func eachSection(v any, fn func(key string, section any)) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		panic("config: sections of " + rv.Type().String() + ", not of a pointer to a struct")
	}
	rv = rv.Elem()
	t := rv.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "-" || !section(f.Type) {
			continue
		}
		switch {
		case slices.Contains(strings.Split(opts, ","), "inline"):
			name = ""
		case name == "":
			name = strings.ToLower(f.Name) // yaml.v3's default
		}
		fn(name, rv.Field(i).Addr().Interface())
	}
}
