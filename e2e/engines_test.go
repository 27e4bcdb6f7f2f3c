package e2e

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRemoteEngineCodeSwitching: the stand-in hears the first segment as
// English and the others as French. With code_switching the utterances keep
// those languages; without it the first language is kept (SPEC 2.6) and
// the job is decoded again in it, so no utterance carries text decoded as
// French under an English label.
func TestRemoteEngineCodeSwitching(t *testing.T) {
	sv, url := startStandin(t)
	sv.mode.Store("mixed")
	// capacity 1: segments are sent one at a time, in order.
	d := startDaemon(t, "", engineConfigWith(url, false, "      capacity: 1\n"))
	key := createKey(t, d.DataDir, "acme")
	path, _ := twoSpeakerFile(t)
	for _, cs := range []bool{true, false} {
		t.Run(fmt.Sprintf("code_switching=%v", cs), func(t *testing.T) {
			sv.detections.Store(0)
			before := len(sv.requests())
			job := submit(t, d, key, path, func(u string) map[string]any {
				return map[string]any{"audio_url": u, "language_config": map[string]any{"code_switching": cs}}
			})
			reqs := sv.requests()[before:]
			var detect, fixed []string
			for _, r := range reqs {
				if r["language"] == "" {
					detect = append(detect, r["_seconds"])
				} else {
					fixed = append(fixed, r["language"])
				}
			}
			tr := job["result"].(map[string]any)["transcription"].(map[string]any)
			var langs []string
			for _, u := range tr["utterances"].([]any) {
				langs = append(langs, u.(map[string]any)["language"].(string))
			}
			if len(detect) < 2 || len(langs) != len(detect) || langs[0] != "en" {
				t.Fatalf("%d detection requests, utterance languages %v", len(detect), langs)
			}
			if cs {
				if len(fixed) != 0 || !slices.Contains(langs, "fr") || fmt.Sprint(tr["languages"]) != "[fr en]" {
					t.Errorf("code switching: languages %v (result %v), %d fixed-language requests", langs, tr["languages"], len(fixed))
				}
				return
			}
			if len(fixed) != len(detect) || slices.ContainsFunc(fixed, func(l string) bool { return l != "en" }) {
				t.Errorf("without code switching: re-decoded in %v, want every segment in en", fixed)
			}
			if slices.ContainsFunc(langs, func(l string) bool { return l != "en" }) || fmt.Sprint(tr["languages"]) != "[en]" {
				t.Errorf("without code switching: languages %v (result %v)", langs, tr["languages"])
			}
		})
	}
}

func TestRemoteEngineBatch(t *testing.T) {
	sv, url := startStandin(t)
	d := startDaemon(t, "", engineConfig(url, false))
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "ls-test-clean-1089-134686-0000.wav")
	status, up, body := d.upload(key, path)
	if status != 200 {
		t.Fatalf("upload %d %s", status, body)
	}
	run := func(req map[string]any) map[string]any {
		t.Helper()
		req["audio_url"] = up.AudioURL
		var created struct{ ID string }
		if status, body := d.postJSON("/v2/pre-recorded", key, req, &created); status != 201 {
			t.Fatalf("create: %d %s", status, body)
		}
		return d.waitJob(key, created.ID, time.Minute)
	}

	// GET /v2/engines lists both engines.
	var engines struct {
		Engines   []map[string]any `json:"engines"`
		Languages []string         `json:"languages"`
	}
	if status, body := d.do("GET", "/v2/engines", key, nil, "", &engines); status != 200 || len(engines.Engines) != 2 ||
		strings.Join(engines.Languages, " ") != "en fr" {
		t.Fatalf("GET /v2/engines: %d %s", status, body)
	}
	// Unserved language: 422 naming what is installed.
	if status, body := d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": up.AudioURL,
		"language_config": map[string]any{"languages": []string{"de"}}}, nil); status != 422 || !strings.Contains(string(body), "installed") {
		t.Fatalf("de: %d %s", status, body)
	}

	// French, with a vocabulary: the server's words at the segments' offsets.
	rec := run(map[string]any{"language_config": map[string]any{"languages": []string{"fr"}},
		"custom_vocabulary": true, "custom_vocabulary_config": map[string]any{"vocabulary": []string{"Ravenna"}}})
	if rec["status"] != "done" {
		t.Fatalf("job: %v", rec)
	}
	reqs := sv.requests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the stand-in")
	}
	for _, f := range reqs {
		if f["model"] != "whisper-test" || f["language"] != "fr" || f["response_format"] != "verbose_json" ||
			!strings.Contains(f["prompt"], "Ravenna") || !strings.Contains(f["timestamp_granularities[]"], "word") {
			t.Errorf("request fields %v", f)
		}
	}
	res := rec["result"].(map[string]any)["transcription"].(map[string]any)
	utts := res["utterances"].([]any)
	if len(utts) != len(reqs) {
		t.Fatalf("%d utterances for %d requests", len(utts), len(reqs))
	}
	prev := -1.0
	for _, u := range utts {
		u := u.(map[string]any)
		start := u["start"].(float64)
		words := u["words"].([]any)
		if u["text"] != "alpha beta" || len(words) != 2 || u["language"] != "fr" || start <= prev {
			t.Fatalf("utterance %v", u)
		}
		w0, w1 := words[0].(map[string]any), words[1].(map[string]any)
		// Word times are the server's plus the segment's start in the file.
		if off := w0["start"].(float64) - 0.10; math.Abs(w1["start"].(float64)-0.50-off) > 0.002 || off < 0 || math.Abs(start-off-0.10) > 0.002 {
			t.Fatalf("words not shifted by the segment offset: %v", u)
		}
		prev = start
	}
	psm := rec["post_session_metadata"].(map[string]any)
	if psm["engine"] != "gpu" {
		t.Errorf("post_session_metadata %v", psm)
	}

	// Server failing, malformed, down: documented job errors, never stuck.
	for _, tc := range []struct{ mode, code, msg string }{
		{"fail", "503", "transcription engine gpu unavailable"},
		{"garbage", "500", "transcription engine gpu returned a bad response"},
	} {
		sv.mode.Store(tc.mode)
		rec := run(map[string]any{"language_config": map[string]any{"languages": []string{"en"}}})
		if rec["status"] != "error" || fmt.Sprint(rec["error_code"]) != tc.code || !strings.Contains(fmt.Sprint(rec["post_session_metadata"]), tc.msg) {
			t.Errorf("%s: %v", tc.mode, rec)
		}
	}
}

func TestRemoteEngineFallback(t *testing.T) {
	sv, url := startStandin(t)
	sv.mode.Store("fail")
	d := startDaemon(t, "", engineConfig(url, true))
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "pocketsphinx-goforward.wav")
	rec := submit(t, d, key, path, func(u string) map[string]any {
		return map[string]any{"audio_url": u, "language_config": map[string]any{"languages": []string{"en"}}}
	})
	psm, _ := rec["post_session_metadata"].(map[string]any)
	fb, _ := psm["fallback"].(map[string]any)
	if rec["status"] != "done" || psm["engine"] != "sphinx" || fb["from"] != "gpu" || !strings.Contains(fmt.Sprint(fb["reason"]), "unavailable") {
		t.Fatalf("fallback job: %v", rec)
	}
	if !strings.Contains(fmt.Sprint(rec["result"]), "forward") {
		t.Errorf("sphinx transcript missing: %v", rec["result"])
	}
}

// TestRemoteEngineTranslate: without a chat backend, translation into en
// of a job transcribed by the remote engine goes to its
// /audio/translations, one request per utterance; the translated
// utterances keep the original times; other targets report 501.
func TestRemoteEngineTranslate(t *testing.T) {
	sv, url := startStandin(t)
	d := startDaemon(t, "", engineConfig(url, false))
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "ls-test-clean-1089-134686-0000.wav")
	rec := submit(t, d, key, path, func(u string) map[string]any {
		return map[string]any{"audio_url": u, "language_config": map[string]any{"languages": []string{"fr"}},
			"translation": true, "translation_config": map[string]any{"target_languages": []string{"en", "de"}}}
	})
	result := rec["result"].(map[string]any)
	utts := result["transcription"].(map[string]any)["utterances"].([]any)
	env := envelope(t, "translation", result["translation"])
	if env["success"] != true {
		t.Fatalf("translation envelope %v", env)
	}
	results := env["results"].([]any)
	enRes, deRes := results[0].(map[string]any), results[1].(map[string]any)
	tr := enRes["utterances"].([]any)
	if len(tr) != len(utts) || len(utts) == 0 || enRes["error"] != nil || enRes["full_transcript"] == "" {
		t.Fatalf("en: %d translated utterances for %d, %v", len(tr), len(utts), enRes)
	}
	for i := range tr {
		o, x := utts[i].(map[string]any), tr[i].(map[string]any)
		words := x["words"].([]any)
		if x["start"] != o["start"] || x["end"] != o["end"] || x["text"] != "hello world" || x["language"] != "en" || len(words) != 2 {
			t.Fatalf("utterance %d: original %v, translated %v", i, o, x)
		}
		for _, w := range words {
			w := w.(map[string]any)
			if w["start"].(float64) < o["start"].(float64) || w["end"].(float64) > o["end"].(float64) {
				t.Errorf("utterance %d: word %v outside the original span", i, w)
			}
		}
	}
	if e, _ := deRes["error"].(map[string]any); fmt.Sprint(e["status_code"]) != "501" {
		t.Errorf("de: %v, want 501 (needs a chat backend)", deRes)
	}
	var translations int
	for _, f := range sv.requests() {
		if f["_path"] != "/v1/audio/translations" {
			continue
		}
		translations++
		if f["model"] != "whisper-test" || f["language"] != "" || f["response_format"] != "verbose_json" {
			t.Errorf("translation request fields %v", f)
		}
	}
	if translations != len(utts) {
		t.Errorf("%d translation requests for %d utterances", translations, len(utts))
	}
}
