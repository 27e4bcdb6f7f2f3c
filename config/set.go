package config

import (
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// ErrUnknownKey is returned by Set for a path that names no key and by
// ApplyEnv for an EARSHOT_ variable that names none.
var ErrUnknownKey = errors.New("config: unknown key")

// Set sets the key at the dotted path of *root (a pointer to a struct)
// from its text, as `earshotd run --set path=value` and EARSHOT_* variables
// do. Strings are taken as they are; other values are YAML, decoded as in
// the file: numbers, true/false, durations ("90s"), CIDRs, and lists as a
// YAML flow sequence ("[a, b]", the brackets may be left out: "a, b"; "[]"
// is the empty list) or maps as a flow mapping ("{en: sphinx}"). An empty
// value resets the key to its default. A list or map is replaced whole.
func Set(root any, path, value string) error {
	for _, k := range Keys(reflect.TypeOf(root).Elem()) {
		if k.Path == path {
			if err := set(root, k, value); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			return nil
		}
	}
	return fmt.Errorf("%w: %s", ErrUnknownKey, path)
}

func set(root any, k Key, value string) error {
	field := reflect.ValueOf(root).Elem().FieldByIndex(k.index)
	t, ptr := k.typ, k.typ.Kind() == reflect.Pointer // a pointer key: nil is the default
	if ptr {
		t = t.Elem()
	}
	v := reflect.New(t)
	text := strings.TrimSpace(value)
	switch {
	case t.Kind() == reflect.String && !decodesItself(t) && !(ptr && value == ""):
		v.Elem().SetString(value)
	case text == "":
		field.Set(reflect.Zero(k.typ)) // the default
		return nil
	default:
		if err := decodeValue(t, text, v.Interface()); err != nil {
			if e := t.Elem; (t.Kind() == reflect.Slice || t.Kind() == reflect.Map) &&
				(e().Kind() == reflect.Struct && !decodesItself(e()) || e().Kind() == reflect.Map || e().Kind() == reflect.Interface) {
				// Items of their own keys may hold secrets (api_key): say
				// what is wrong without echoing the value.
				return fmt.Errorf("must be %s: %w", describeType(t), err)
			}
			return fmt.Errorf("must be %s, not %q", describeType(t), value)
		}
	}
	if ptr {
		field.Set(v)
	} else {
		field.Set(v.Elem())
	}
	return nil
}

// decodeValue decodes the YAML text into out, a pointer to a t, as the file
// would, except that a fractional number is refused for an integer (yaml.v3
// would truncate 1.5 to 1) and a list's brackets may be left out.
func decodeValue(t reflect.Type, text string, out any) error {
	if t.Kind() == reflect.Slice && !strings.HasPrefix(text, "[") {
		text = "[" + text + "]"
	}
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(text), &node); err != nil {
		return err
	}
	if t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64 && !decodesItself(t) &&
		(len(node.Content) != 1 || node.Content[0].Tag != "!!int") {
		return errors.New("not an integer")
	}
	dec := yaml.NewDecoder(strings.NewReader(text))
	dec.KnownFields(true)
	return dec.Decode(out)
}

// describeType says in words what a value of t looks like.
func describeType(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[time.Duration]():
		return `a duration such as "90s", "5m" or "72h"`
	case t == reflect.TypeFor[netip.Prefix]():
		return "a CIDR such as 10.0.0.0/8"
	case t.Kind() == reflect.Slice:
		return "a list such as [a, b] of " + describeType(t.Elem()) + " items"
	case t.Kind() == reflect.Map:
		return "a mapping such as {a: b}"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return "an integer"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "a number"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Struct:
		return "a mapping of its keys"
	}
	return "a " + t.Kind().String()
}
