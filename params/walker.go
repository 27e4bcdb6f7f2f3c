package params

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// problems collects the 400 problems of one request in the order found. Each
// entry starts with the offending field's JSON path.
type problems struct {
	list    []string
	dropped int // problems past maxProblems, counted not kept
}

func (p *problems) addf(path, format string, args ...any) {
	if len(p.list) >= maxProblems {
		p.dropped++
		return
	}
	p.list = append(p.list, path+" "+fmt.Sprintf(format, args...))
}

// reported reports whether a problem was already recorded for path or a
// field inside it, so a "required" problem does not repeat a type problem.
func (p *problems) reported(path string) bool {
	for _, s := range p.list {
		if rest, ok := strings.CutPrefix(s, path); ok && (rest == "" || rest[0] == ' ' || rest[0] == '.' || rest[0] == '[') {
			return true
		}
	}
	return false
}

// err returns the collected problems as a *ValidationError, or nil.
func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	list := p.list
	if p.dropped > 0 {
		list = append(list, fmt.Sprintf("body has %d more problems", p.dropped))
	}
	return &ValidationError{Problems: list}
}

// kind is the JSON type of a raw value, read from its first byte (the raw
// value has been checked as valid JSON by the enclosing Unmarshal).
type kind int

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func kindOf(raw json.RawMessage) kind {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return kindNull
	}
	switch raw[0] {
	case 'n':
		return kindNull
	case 't', 'f':
		return kindBool
	case '"':
		return kindString
	case '[':
		return kindArray
	case '{':
		return kindObject
	}
	return kindNumber
}

// child joins an object path and a field name.
func child(path, name string) string {
	name = printableKey(name)
	if path == "" {
		return name
	}
	return path + "." + name
}

// index joins an array path and an element index.
func index(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

// printableKey returns a client-supplied key as it may appear in a problem:
// plain keys as they are, others quoted, and long ones cut.
func printableKey(k string) string {
	const max = 64
	plain := k != ""
	for _, r := range k {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if len(k) > max {
		k = truncate(k, max) + "..."
		plain = false
	}
	if plain {
		return k
	}
	return strconv.Quote(k)
}

// truncate cuts s to at most n bytes without splitting a rune.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// object walks one JSON object: each getter consumes a field, reporting its
// problems under the field's path, and done reports every field left over as
// unknown.
type object struct {
	p      *problems
	path   string // "" at the root
	fields map[string]json.RawMessage
}

// root parses a whole body as an object. An empty body is an empty object.
func root(p *problems, body []byte) (*object, bool) {
	if len(bytes.TrimSpace(body)) == 0 {
		return &object{p: p, fields: map[string]json.RawMessage{}}, true
	}
	if !json.Valid(body) {
		p.addf("body", "is not valid JSON")
		return nil, false
	}
	return asObject(p, "body", "", body)
}

// asObject decodes raw as an object whose fields are reported under path;
// name is what a type problem is reported under.
func asObject(p *problems, name, path string, raw json.RawMessage) (*object, bool) {
	if kindOf(raw) != kindObject {
		p.addf(name, "must be an object")
		return nil, false
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		p.addf(name, "must be an object")
		return nil, false
	}
	return &object{p: p, path: path, fields: fields}, true
}

// take consumes field name; ok is false when it is absent or null.
func (o *object) take(name string) (raw json.RawMessage, path string, ok bool) {
	raw, ok = o.fields[name]
	delete(o.fields, name)
	path = child(o.path, name)
	if !ok || kindOf(raw) == kindNull {
		return nil, path, false
	}
	return raw, path, true
}

// has reports whether field name is still present and not null.
func (o *object) has(name string) bool {
	raw, ok := o.fields[name]
	return ok && kindOf(raw) != kindNull
}

// done reports the fields nobody consumed, sorted by name.
func (o *object) done() {
	names := make([]string, 0, len(o.fields))
	for k := range o.fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		o.p.addf(child(o.path, k), "is not a known field")
	}
	o.fields = nil
}

// boolean returns field name, or def when it is absent or malformed.
func (o *object) boolean(name string, def bool) bool {
	raw, path, ok := o.take(name)
	if !ok {
		return def
	}
	b, ok := asBool(o.p, path, raw)
	if !ok {
		return def
	}
	return b
}

// str returns field name; ok is false when absent or malformed.
func (o *object) str(name string) (s, path string, ok bool) {
	raw, path, ok := o.take(name)
	if !ok {
		return "", path, false
	}
	s, ok = asString(o.p, path, raw)
	return s, path, ok
}

// number returns field name; ok is false when absent or malformed.
func (o *object) number(name string) (f float64, path string, ok bool) {
	raw, path, ok := o.take(name)
	if !ok {
		return 0, path, false
	}
	f, ok = asNumber(o.p, path, raw)
	return f, path, ok
}

// integer returns field name; ok is false when absent or malformed.
func (o *object) integer(name string) (n int, path string, ok bool) {
	raw, path, ok := o.take(name)
	if !ok {
		return 0, path, false
	}
	n, ok = asInt(o.p, path, raw)
	return n, path, ok
}

// object returns field name as a nested object; ok is false when absent or
// malformed. The caller must call done on it.
func (o *object) object(name string) (*object, bool) {
	raw, path, ok := o.take(name)
	if !ok {
		return nil, false
	}
	return asObject(o.p, path, path, raw)
}

// array returns the elements of field name, at most max of them; ok is false
// when absent or malformed (over-long arrays are reported and rejected).
func (o *object) array(name string, max int) (elems []json.RawMessage, path string, ok bool) {
	raw, path, ok := o.take(name)
	if !ok {
		return nil, path, false
	}
	elems, ok = asArray(o.p, path, raw, max)
	return elems, path, ok
}

// strings returns field name as an array of strings, each passed through
// check (which reports its own problems and may rewrite the value); ok is
// false when absent or when anything was malformed.
func (o *object) strings(name string, max int, check func(path, s string) (string, bool)) (out []string, path string, ok bool) {
	elems, path, ok := o.array(name, max)
	if !ok {
		return nil, path, false
	}
	out = make([]string, 0, len(elems))
	for i, e := range elems {
		ep := index(path, i)
		s, good := asString(o.p, ep, e)
		if good && check != nil {
			s, good = check(ep, s)
		}
		if !good {
			ok = false
			continue
		}
		out = append(out, s)
	}
	return out, path, ok
}

func asBool(p *problems, path string, raw json.RawMessage) (bool, bool) {
	if kindOf(raw) != kindBool {
		p.addf(path, "must be a boolean")
		return false, false
	}
	return bytes.HasPrefix(bytes.TrimSpace(raw), []byte("true")), true
}

func asString(p *problems, path string, raw json.RawMessage) (string, bool) {
	var s string
	if kindOf(raw) != kindString || json.Unmarshal(raw, &s) != nil {
		p.addf(path, "must be a string")
		return "", false
	}
	return s, true
}

// asNumber decodes a finite JSON number; a number too large for float64 is
// reported as out of range.
func asNumber(p *problems, path string, raw json.RawMessage) (float64, bool) {
	if kindOf(raw) != kindNumber {
		p.addf(path, "must be a number")
		return 0, false
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		p.addf(path, "is out of range")
		return 0, false
	}
	return f, true
}

// asInt decodes a JSON number with an integral value (2 and 2.0 alike).
func asInt(p *problems, path string, raw json.RawMessage) (int, bool) {
	if kindOf(raw) != kindNumber {
		p.addf(path, "must be an integer")
		return 0, false
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
	if err != nil || f != math.Trunc(f) {
		p.addf(path, "must be an integer")
		return 0, false
	}
	if math.Abs(f) > 1<<31 {
		p.addf(path, "is out of range")
		return 0, false
	}
	return int(f), true
}

func asArray(p *problems, path string, raw json.RawMessage, max int) ([]json.RawMessage, bool) {
	var elems []json.RawMessage
	if kindOf(raw) != kindArray || json.Unmarshal(raw, &elems) != nil {
		p.addf(path, "must be an array")
		return nil, false
	}
	if len(elems) > max {
		p.addf(path, "must have at most %d items", max)
		return nil, false
	}
	return elems, true
}

// oneOf reports whether s is in set, reporting a problem listing the set if not.
func oneOf(p *problems, path, s string, set ...string) bool {
	if slices.Contains(set, s) {
		return true
	}
	p.addf(path, "must be one of %s", strings.Join(set, ", "))
	return false
}

// inRange reports whether lo ≤ f ≤ hi, reporting a problem if not.
func inRange(p *problems, path string, f, lo, hi float64) bool {
	if f < lo || f > hi {
		p.addf(path, "must be from %s to %s", fmtNum(lo), fmtNum(hi))
		return false
	}
	return true
}

// fmtNum prints a bound as a person would write it (0.01, 10, 5).
func fmtNum(f float64) string {
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// word checks a short client string: not empty, at most max bytes.
func word(p *problems, path, s string, max int) bool {
	if strings.TrimSpace(s) == "" {
		p.addf(path, "must not be empty")
		return false
	}
	if len(s) > max {
		p.addf(path, "must be at most %d bytes", max)
		return false
	}
	return true
}

// dedupe returns ss without repeats, first occurrences kept in order.
func dedupe(ss []string) []string {
	out := ss[:0]
	seen := make(map[string]bool, len(ss))
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
