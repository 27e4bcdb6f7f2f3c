package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// TestCustomVocabularyGain transcribes the same real recording through the
// daemon without and with custom_vocabulary. The embedded engine's
// baseline decode of LJ001-0002 ("in being comparatively modern") misses
// "modern"; with it in the vocabulary (no intensity given: the default,
// 0.5) the word is recognised, and post_session_metadata says the
// vocabulary went to the engine's dictionary.
func TestCustomVocabularyGain(t *testing.T) {
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	path := filepath.Join(recognizertest.SpeechDir(t), "ljspeech-LJ001-0002.wav")
	const word = "modern"

	transcript := func(job map[string]any) string {
		t.Helper()
		res, _ := job["result"].(map[string]any)
		tr, _ := res["transcription"].(map[string]any)
		full, _ := tr["full_transcript"].(string)
		return full
	}
	plain := submit(t, d, key, path, func(url string) map[string]any { return map[string]any{"audio_url": url} })
	boosted := submit(t, d, key, path, func(url string) map[string]any {
		return map[string]any{"audio_url": url, "custom_vocabulary": []any{"Modern"}}
	})
	base, with := transcript(plain), transcript(boosted)
	t.Logf("without: %q\nwith:    %q", base, with)
	if slices.Contains(recognizertest.Normalize(base), word) {
		t.Fatalf("the baseline %q already has %q: the test shows nothing", base, word)
	}
	if !slices.Contains(recognizertest.Normalize(with), word) {
		t.Errorf("with custom_vocabulary %q: no %q", with, word)
	}
	meta, _ := boosted["post_session_metadata"].(map[string]any)
	note := fmt.Sprint(meta["custom_vocabulary"])
	if !strings.Contains(note, "sphinx's dictionary") || strings.Contains(note, "not applied") {
		t.Errorf("post_session_metadata custom_vocabulary %q", note)
	}
	if m, _ := plain["post_session_metadata"].(map[string]any); m["custom_vocabulary"] != nil {
		t.Errorf("job without vocabulary has a note: %v", m)
	}
}

// TestVocabularyCrashRequests sends the custom_vocabulary requests that
// killed the daemon with SIGSEGV in ps_process_raw (issue 13, finding 1):
// seven homophones, 5 items said "K AA", 10 said "G OW", 1000 said "K AA".
// Every job must finish and the daemon must stay up (same process) for a
// plain job after them.
func TestVocabularyCrashRequests(t *testing.T) {
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	path := filepath.Join(recognizertest.SpeechDir(t), "ljspeech-LJ001-0002.wav")
	items := func(n int, pron string) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = map[string]any{"value": fmt.Sprintf("word%c%c%c", 'a'+i%26, 'a'+i/26%26, 'a'+i/676%26), "pronunciations": []string{pron}}
		}
		return out
	}
	vocabularies := [][]any{
		{"Kah", "Kaa", "Cah", "Caa", "Khaa", "Kha", "Qah"},
		items(5, "K AA"),
		items(10, "G OW"),
		items(1000, "K AA"),
	}
	for _, v := range vocabularies {
		for range 2 {
			submit(t, d, key, path, func(url string) map[string]any {
				return map[string]any{"audio_url": url, "custom_vocabulary": true,
					"custom_vocabulary_config": map[string]any{"vocabulary": v}}
			})
		}
	}
	submit(t, d, key, path, func(url string) map[string]any { return map[string]any{"audio_url": url} })
	select {
	case <-d.done:
		t.Fatal("the daemon exited")
	default:
	}
}
