package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"

	"gopkg.in/yaml.v3"
)

// Decode decodes the YAML file data into *root; an unknown key is an error
// naming its line. An empty file leaves root as it is.
func Decode(data []byte, root any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(root); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// Check walks the YAML file data against struct type t, key by key, and
// returns the line of every key it meets (by dotted path) and every unknown
// key or undecodable value, each with its key and line, rather than only
// the first one yaml.v3 meets. A file that is not YAML is one problem.
func Check(data []byte, t reflect.Type) (lines map[string]int, problems []*Problem) {
	lines = map[string]int{}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return lines, []*Problem{{Msg: err.Error()}}
	}
	if len(doc.Content) > 0 {
		check(doc.Content[0], t, "", lines, &problems)
	}
	return lines, problems
}

// check checks node against type t (the type its value decodes into).
func check(node *yaml.Node, t reflect.Type, key string, lines map[string]int, problems *[]*Problem) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if node.Kind == yaml.AliasNode && node.Alias != nil {
		node = node.Alias
	}
	if node.Tag == "!!null" {
		return // null leaves the field at its zero value, i.e. the default
	}
	bad := func(n *yaml.Node, format string, a ...any) {
		*problems = append(*problems, &Problem{Key: key, Line: n.Line, Msg: fmt.Sprintf(format, a...)})
	}
	switch {
	case decodesItself(t) || t.Kind() != reflect.Struct && t.Kind() != reflect.Map && t.Kind() != reflect.Slice:
		if err := node.Decode(reflect.New(t).Interface()); err != nil {
			bad(node, "%s", typeMessage(node, t, err))
		}
	case t.Kind() == reflect.Struct:
		if node.Kind != yaml.MappingNode {
			bad(node, "must be a mapping of keys")
			return
		}
		byName := map[string]reflect.Type{}
		for _, f := range fields(t) {
			byName[f.name] = f.typ
		}
		for i := 0; i+1 < len(node.Content); i += 2 {
			k, v := node.Content[i], node.Content[i+1]
			full := join(key, k.Value)
			lines[full] = k.Line
			ft, ok := byName[k.Value]
			if !ok {
				*problems = append(*problems, &Problem{Key: full, Line: k.Line, Msg: "unknown key"})
				continue
			}
			check(v, ft, full, lines, problems)
		}
	case t.Kind() == reflect.Map:
		if node.Kind != yaml.MappingNode {
			bad(node, "must be a mapping")
			return
		}
		for i := 0; i+1 < len(node.Content); i += 2 {
			k, v := node.Content[i], node.Content[i+1]
			full := join(key, k.Value)
			lines[full] = k.Line
			check(v, t.Elem(), full, lines, problems)
		}
	case t.Kind() == reflect.Slice:
		if node.Kind != yaml.SequenceNode {
			bad(node, "must be a list")
			return
		}
		for i, v := range node.Content {
			check(v, t.Elem(), fmt.Sprintf("%s[%d]", key, i), lines, problems)
		}
	}
}

// typeMessage says why the scalar in node does not decode into t.
func typeMessage(node *yaml.Node, t reflect.Type, err error) string {
	want := describeType(t)
	if node.Kind != yaml.ScalarNode {
		return "must be " + want
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) && want == "a "+t.Kind().String() {
		return err.Error() // no words for t: yaml.v3's own
	}
	return fmt.Sprintf("must be %s, not %q", want, node.Value)
}
