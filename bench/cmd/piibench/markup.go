package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// span is one marked entity: its type and its words [first, last].
type span struct {
	typ         string
	first, last int
}

// sentence is one line of the set: its words as a recogniser writes them
// and the entities marked in it.
type sentence struct {
	line  int
	words []string
	spans []span
}

// maxLine bounds one line of a set file.
const maxLine = 64 << 10

// parseSet reads a set file: one sentence a line, entities marked inline
// as "[TYPE word word ...]" (not nested), "#" starting a comment line.
func parseSet(r io.Reader) ([]sentence, error) {
	var out []sentence
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		s.line = n
		out = append(out, s)
	}
	return out, sc.Err()
}

func parseLine(line string) (sentence, error) {
	var s sentence
	open := -1
	typ := ""
	for _, f := range strings.Fields(line) {
		if t, ok := strings.CutPrefix(f, "["); ok {
			if open >= 0 {
				return s, fmt.Errorf("nested entity at %q", f)
			}
			if t == "" || strings.HasSuffix(t, "]") {
				return s, fmt.Errorf("entity without words at %q", f)
			}
			open, typ = len(s.words), t
			continue
		}
		w, closing := strings.CutSuffix(f, "]")
		if closing && open < 0 {
			return s, fmt.Errorf("unopened entity at %q", f)
		}
		if w == "" {
			return s, fmt.Errorf("empty word at %q", f)
		}
		s.words = append(s.words, w)
		if closing {
			s.spans = append(s.spans, span{typ, open, len(s.words) - 1})
			open = -1
		}
	}
	if open >= 0 {
		return s, fmt.Errorf("entity %s not closed", typ)
	}
	if len(s.words) == 0 {
		return s, fmt.Errorf("no words")
	}
	return s, nil
}
