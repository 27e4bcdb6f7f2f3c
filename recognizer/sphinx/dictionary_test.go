package sphinx

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
)

// TestSearchDictionary: a pool's decoders know the language model's words
// (alternate pronunciations included) and not the dictionary's others,
// which cost memory and were never proposed; a vocabulary still brings a
// dictionary word the model lacks ("zywicki", in cmudict, not in en-us.lm).
func TestSearchDictionary(t *testing.T) {
	e := newEngine(t, 1)
	dict, err := searchDictionary(e.cfg.Dict, e.cfg.LM)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(dict, []byte("\n")); n < 70000 || n > 90000 {
		t.Errorf("%d entries; want the en-us model's ~72,500 words and their alternates", n)
	}
	st := openStream(t, e)
	for w, want := range map[string]bool{"hello": true, "read(2)": true, "forward": true, "zywicki": false} {
		if got := st.d.knows(w); got != want {
			t.Errorf("decoder knows %q: %v, want %v", w, got, want)
		}
	}
	st.Close()
	vs, err := e.NewStream(t.Context(), recognizer.StreamOptions{Vocabulary: []recognizer.VocabularyWord{{Value: "Zywicki", Intensity: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	defer vs.Close()
	if !vs.(*Stream).d.knows("zywicki") {
		t.Error("a vocabulary's dictionary word is not on its decoder")
	}
}

// TestSearchDictionarySameWords: a decoder on the model's words decodes a
// clip to the same words and times as one on the whole dictionary.
func TestSearchDictionarySameWords(t *testing.T) {
	e := newEngine(t, 1)
	_, pcm := clip(t, "librivox-sense-and-sensibility-01-0870.wav")
	decode := func() recognizer.Utterance {
		t.Helper()
		st := openStream(t, e)
		defer st.Close()
		u, err := st.Decode(pcm)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	trimmed := decode()
	full, err := newDecoder(e.cfg, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	e.idle[0].free()
	e.idle[0] = full
	e.mu.Unlock()
	if !full.knows("zywicki") {
		t.Fatal("the whole dictionary lacks zywicki")
	}
	whole := decode()
	if trimmed.Text == "" || trimmed.Text != whole.Text || len(trimmed.Words) != len(whole.Words) {
		t.Fatalf("model's words %q, whole dictionary %q", trimmed.Text, whole.Text)
	}
	for i := range trimmed.Words {
		if trimmed.Words[i] != whole.Words[i] {
			t.Errorf("word %d: %+v against %+v", i, trimmed.Words[i], whole.Words[i])
		}
	}
}

// TestTelephoneSharesDictionary: the telephone pools made from an engine
// share its lexicon and dictionary text instead of reading their own.
func TestTelephoneSharesDictionary(t *testing.T) {
	cfg := Config{Decoders: 1, TelephoneHMM: DefaultHMM, TelephoneDecoders: 1}
	cfg.SetDefaults()
	e, err := New(cfg, recognizer.NewCPU(cfg.LiveDecodes), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, batch := range []bool{false, true} {
		tel, err := e.Telephone(batch, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tel.lex != e.lex || &tel.dict[0] != &e.dict[0] {
			t.Errorf("batch %v: the telephone pool read its own lexicon or dictionary", batch)
		}
		tel.Close()
	}
}

// TestLexiconReadAtFirstVocabulary: New reads the dictionary for its
// decoders but not the lexicon (134,723 entries: 0.3 CPU s and 26 MB at
// every start before); the first vocabulary reads it,
// and a dictionary gone by then is an error, not a panic (CheckVocabulary's,
// which reaches the client as a result's note, without the file's path).
func TestLexiconReadAtFirstVocabulary(t *testing.T) {
	words := []recognizer.VocabularyWord{{Value: "Zywicki", Intensity: 1}}
	open := func(dict string) *Engine {
		t.Helper()
		cfg := Config{Decoders: 1, LoadOnDemand: true, Dict: dict}
		cfg.SetDefaults()
		e, err := New(cfg, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	copyDict := func() string {
		t.Helper()
		b, err := os.ReadFile(DefaultDict)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "cmudict.dict")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}

	gone := copyDict()
	e := open(gone)
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	errs := e.CheckVocabulary(words)
	if len(errs) != 1 || !errors.Is(errs[0], ErrVocabulary) || strings.Contains(errs[0].Error(), gone) {
		t.Fatalf("CheckVocabulary with the dictionary gone after New: %v, want ErrVocabulary without the server's path (its problems reach the client)", errs)
	}
	if _, err := e.NewStream(t.Context(), recognizer.StreamOptions{Vocabulary: words}); !errors.Is(err, ErrVocabulary) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("NewStream with the dictionary gone after New: %v, want ErrVocabulary and not-exist", err)
	}

	kept := copyDict()
	e = open(kept)
	if errs := e.CheckVocabulary(words); len(errs) != 0 {
		t.Fatalf("CheckVocabulary: %v", errs)
	}
	if err := os.Remove(kept); err != nil {
		t.Fatal(err)
	}
	st, err := e.NewStream(t.Context(), recognizer.StreamOptions{Vocabulary: words})
	if err != nil {
		t.Fatalf("NewStream after the lexicon was read: %v", err)
	}
	defer st.Close()
	if !st.(*Stream).d.knows("zywicki") {
		t.Error("the vocabulary's dictionary word is not on its decoder")
	}
}
