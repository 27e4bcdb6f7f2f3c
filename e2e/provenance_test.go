package e2e

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// provenByGaps checks a field case that leaves its proof to another test
// (provenBy, "path/from/repo_test.go:TestName"): the test must exist, and
// it must set every one of fields (dotted request paths): its body (with
// the function literals in it) has the field's JSON name as a string
// literal ("default_intensity") or its Go name as a composite literal's
// key or an assigned selector (DefaultIntensity: ..., x.DefaultIntensity =
// ...). A test that merely exists, or that runs the feature without the
// field, does not prove what the field does. It returns what is missing.
func provenByGaps(provenBy string, fields []string) []string {
	file, fn, _ := strings.Cut(provenBy, ":")
	f, err := parser.ParseFile(token.NewFileSet(), "../"+file, nil, parser.SkipObjectResolution)
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", provenBy, err)}
	}
	var body *ast.BlockStmt
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == fn {
			body = fd.Body
		}
	}
	if body == nil {
		return []string{fmt.Sprintf("%s: no func %s in %s", provenBy, fn, file)}
	}
	set := map[string]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			if s, err := strconv.Unquote(n.Value); n.Kind == token.STRING && err == nil {
				set[s] = true
			}
		case *ast.KeyValueExpr:
			if id, ok := n.Key.(*ast.Ident); ok {
				set[id.Name] = true
			}
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if sel, ok := l.(*ast.SelectorExpr); ok {
					set[sel.Sel.Name] = true
				}
			}
		}
		return true
	})
	var gaps []string
	for _, field := range fields {
		leaf := field[strings.LastIndex(field, ".")+1:]
		if !set[leaf] && !set[goName(leaf)] {
			gaps = append(gaps, fmt.Sprintf("%s never sets %s (neither %q nor %s in its body): it cannot prove what the field does", provenBy, field, leaf, goName(leaf)))
		}
	}
	return gaps
}

// checkProvenBy fails t for every gap provenByGaps finds.
func checkProvenBy(t *testing.T, provenBy string, fields []string) {
	t.Helper()
	for _, g := range provenByGaps(provenBy, fields) {
		t.Error(g)
	}
}

// goName is a snake_case JSON name as its Go field name
// (match_original_utterances: MatchOriginalUtterances).
func goName(json string) string {
	var b strings.Builder
	for _, p := range strings.Split(json, "_") {
		if p != "" {
			b.WriteString(strings.ToUpper(p[:1]) + p[1:])
		}
	}
	return b.String()
}

// TestCheckProvenBy shows provenByGaps failing a test that exists but
// never sets the field (TestCustomVocabularyGain gives no intensity) and a
// test that does not exist, and passing the ones that set their fields,
// by JSON name and by Go name.
func TestCheckProvenBy(t *testing.T) {
	for _, c := range []struct {
		provenBy string
		fields   []string
		gaps     int
	}{
		{"e2e/vocabulary_test.go:TestCustomVocabularyGain", []string{"custom_vocabulary_config.vocabulary.intensity", "custom_vocabulary_config.default_intensity"}, 2},
		{"e2e/vocabulary_test.go:TestNoSuchTest", []string{"custom_vocabulary"}, 1},
		{"e2e/vocabulary_test.go:TestVocabularyIntensity", []string{"custom_vocabulary_config.vocabulary.intensity", "custom_vocabulary_config.default_intensity"}, 0},
		{"recognizer/addons/llm/llm_test.go:TestTranslate", []string{"translation_config.match_original_utterances"}, 0},
	} {
		if gaps := provenByGaps(c.provenBy, c.fields); len(gaps) != c.gaps {
			t.Errorf("%s %v: %d gaps %q, want %d", c.provenBy, c.fields, len(gaps), gaps, c.gaps)
		}
	}
}
