package e2e

import (
	"fmt"
	"slices"
	"testing"
)

// TestLiveCodeSwitching: a live session on a remote engine that detects
// the language (the stand-in hears the first utterance as English, later
// ones as French when asked to detect). Without code_switching the first
// language is kept (SPEC 2.6): every later utterance is decoded in it, and
// all are labelled en; with it, each utterance is detected on its own.
func TestLiveCodeSwitching(t *testing.T) {
	sv, url := startStandin(t)
	sv.mode.Store("mixed")
	// The live pass's labels are shown: no batch pass replaces the result.
	d := startDaemon(t, "", engineConfigWith(url, false, "      capacity: 1\n")+"live:\n  batch_pass: false\n")
	key := createKey(t, d.DataDir, "acme")
	audio := liveAudio{clips: []string{"pocketsphinx-goforward.wav", "pocketsphinx-goforward.wav", "pocketsphinx-goforward.wav"}}.bytes(t)
	for _, cs := range []bool{false, true} {
		t.Run(fmt.Sprintf("code_switching=%v", cs), func(t *testing.T) {
			sv.detections.Store(0)
			before := len(sv.requests())
			s := d.createLive(key, map[string]any{"language_config": map[string]any{"code_switching": cs}})
			msgs, code := runSession(t, s.URL, audio, 32, 0)
			v := viewLive(t, msgs)
			if code != 1000 || len(v.finals) < 3 {
				t.Fatalf("close %d, %d finals", code, len(v.finals))
			}
			var asked []string
			for _, r := range sv.requests()[before:] {
				asked = append(asked, r["language"])
			}
			var langs []string
			for _, u := range v.finals {
				langs = append(langs, u.Language)
			}
			var job map[string]any
			d.do("GET", "/v2/live/"+s.ID, key, nil, "", &job)
			tr := job["result"].(map[string]any)["transcription"].(map[string]any)
			t.Logf("requests' languages %q, utterances %v, result %v", asked, langs, tr["languages"])
			if langs[0] != "en" || asked[0] != "" {
				t.Fatalf("first utterance %s, first request language %q: want detected as en", langs[0], asked[0])
			}
			if cs {
				if slices.ContainsFunc(asked, func(l string) bool { return l != "" }) || !slices.Contains(langs, "fr") {
					t.Errorf("code switching: every utterance must be detected on its own")
				}
				return
			}
			if slices.Contains(asked[1:], "") || slices.ContainsFunc(asked[1:], func(l string) bool { return l != "en" }) ||
				slices.ContainsFunc(langs, func(l string) bool { return l != "en" }) || fmt.Sprint(tr["languages"]) != "[en]" {
				t.Errorf("without code switching: later utterances must be decoded in en, the language of the first")
			}
		})
	}
}
