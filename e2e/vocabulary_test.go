package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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

// TestVocabularyIntensity shows that custom_vocabulary's intensity and
// default_intensity decide whether a listed word is recognised, through
// the daemon on real speech: LJ001-0002 ("in being comparatively modern"),
// whose baseline decode misses "modern" (TestCustomVocabularyGain).
// Intensity 0 adds the word without a floor (recognizer/sphinx,
// floorLog10), and "modern" is already in the dictionary, so the decode is
// the baseline's; intensity 1 floors it at a function word's probability
// and it is heard. An item's own intensity wins over default_intensity
// (recognizer/pipeline, vocabularyWords). Each case is a pre-recorded job
// and, for default_intensity, a live session (finals from the same engine
// wrapper).
func TestVocabularyIntensity(t *testing.T) {
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	path := filepath.Join(recognizertest.SpeechDir(t), "ljspeech-LJ001-0002.wav")
	const word = "modern"
	status, up, b := d.upload(key, path)
	if status != 200 {
		t.Fatalf("upload: %d %s", status, b)
	}
	item := func(intensity float64) map[string]any {
		return map[string]any{"value": "Modern", "intensity": intensity}
	}
	cases := []struct {
		name  string
		cfg   map[string]any // custom_vocabulary_config
		heard bool
	}{
		{"item intensity 0", map[string]any{"vocabulary": []any{item(0)}}, false},
		{"item intensity 1", map[string]any{"vocabulary": []any{item(1)}}, true},
		{"default_intensity 0", map[string]any{"vocabulary": []any{"Modern"}, "default_intensity": 0}, false},
		{"default_intensity 1", map[string]any{"vocabulary": []any{"Modern"}, "default_intensity": 1}, true},
		{"item intensity 0 under default_intensity 1", map[string]any{"vocabulary": []any{item(0)}, "default_intensity": 1}, false},
		{"item intensity 1 under default_intensity 0", map[string]any{"vocabulary": []any{item(1)}, "default_intensity": 0}, true},
	}
	// Every job is queued at once: the daemon's two decoders share them.
	ids := make([]string, len(cases))
	for i, c := range cases {
		var created struct{ ID string }
		body := map[string]any{"audio_url": up.AudioURL, "custom_vocabulary": true, "custom_vocabulary_config": c.cfg}
		if status, b := d.postJSON("/v2/pre-recorded", key, body, &created); status != 201 {
			t.Fatalf("%s: POST /v2/pre-recorded: %d %s", c.name, status, b)
		}
		ids[i] = created.ID
	}
	for i, c := range cases {
		job := d.waitJob(key, ids[i], 2*time.Minute)
		res, _ := job["result"].(map[string]any)
		tr, _ := res["transcription"].(map[string]any)
		full, _ := tr["full_transcript"].(string)
		t.Logf("pre-recorded, %s: %q", c.name, full)
		if got := slices.Contains(recognizertest.Normalize(full), word); got != c.heard {
			t.Errorf("pre-recorded, %s: %q has %q: %v, want %v", c.name, full, word, got, c.heard)
		}
	}
	audio := pcmOf(t, path)
	for _, c := range cases[2:4] {
		s := d.createLive(key, map[string]any{"language_config": map[string]any{"languages": []string{"en"}},
			"realtime_processing": map[string]any{"custom_vocabulary": true, "custom_vocabulary_config": c.cfg}})
		if _, code := runSession(t, s.URL, audio, 32, 0); code != 1000 {
			t.Fatalf("live, %s: close code %d", c.name, code)
		}
		var job map[string]any
		d.do("GET", "/v2/live/"+s.ID, key, nil, "", &job)
		res, _ := job["result"].(map[string]any)
		tr, _ := res["transcription"].(map[string]any)
		full, _ := tr["full_transcript"].(string)
		t.Logf("live, %s: %q", c.name, full)
		if got := slices.Contains(recognizertest.Normalize(full), word); got != c.heard {
			t.Errorf("live, %s: %q has %q: %v, want %v", c.name, full, word, got, c.heard)
		}
	}
}
