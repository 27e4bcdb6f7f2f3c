package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestAddonLanguages runs the English-only add-ons against a remote
// engine serving French (the stand-in) through the daemon: a request
// listing only French is refused at creation (422 naming the add-on and
// the language), pre-recorded and live; a transcript detected as French
// gets success false with a 422 UnsupportedLanguage AddonError naming fr
// in the named_entity_recognition, pii_redaction and sentiment_analysis
// envelopes and in every realtime message; an English one succeeds.
func TestAddonLanguages(t *testing.T) {
	sv, url := startStandin(t)
	d := startDaemon(t, "", engineConfig(url, false)+"live:\n  batch_pass: false\n")
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "ls-test-clean-1089-134686-0000.wav")
	status, up, b := d.upload(key, path)
	if status != 200 {
		t.Fatalf("upload %d %s", status, b)
	}
	langs := func(l ...string) map[string]any { return map[string]any{"languages": l} }
	addons := func(lc map[string]any) map[string]any {
		return map[string]any{"audio_url": up.AudioURL, "language_config": lc,
			"named_entity_recognition": true, "pii_redaction": true, "sentiment_analysis": true}
	}

	t.Run("422 at creation", func(t *testing.T) {
		var eb errBody
		status, _ := d.postJSON("/v2/pre-recorded", key, addons(langs("fr")), &eb)
		checkError(t, status, eb, 422, "pre-recorded fr")
		if !strings.Contains(eb.Message, "named_entity_recognition true: this add-on reads only en") || !strings.Contains(eb.Message, "names fr") {
			t.Errorf("pre-recorded fr: %q", eb.Message)
		}
		eb = errBody{}
		status, _ = d.postJSON("/v2/live", key, map[string]any{"language_config": langs("fr"),
			"realtime_processing": map[string]any{"sentiment_analysis": true}}, &eb)
		checkError(t, status, eb, 422, "live fr")
		if !strings.Contains(eb.Message, "realtime_processing.sentiment_analysis true: this add-on reads only en") || !strings.Contains(eb.Message, "names fr") {
			t.Errorf("live fr: %q", eb.Message)
		}
		// Transcription alone in French is served.
		if status, b := d.postJSON("/v2/pre-recorded", key, map[string]any{"audio_url": up.AudioURL, "language_config": langs("fr"), "diarization": true}, nil); status != 201 {
			t.Errorf("fr without an English-only add-on: %d %s", status, b)
		}
	})

	run := func(t *testing.T, lc map[string]any) map[string]any {
		t.Helper()
		var created struct{ ID string }
		if status, b := d.postJSON("/v2/pre-recorded", key, addons(lc), &created); status != 201 {
			t.Fatalf("create: %d %s", status, b)
		}
		job := d.waitJob(key, created.ID, 2*time.Minute)
		if job["status"] != "done" {
			t.Fatalf("job %v", job)
		}
		return job["result"].(map[string]any)
	}
	t.Run("pre-recorded French", func(t *testing.T) {
		sv.mode.Store("french") // detected as French among en and fr
		defer sv.mode.Store("ok")
		res := run(t, langs("en", "fr"))
		if l := res["transcription"].(map[string]any)["languages"]; fmt.Sprint(l) != "[fr]" {
			t.Fatalf("transcription languages %v, want [fr]", l)
		}
		for _, name := range []string{"named_entity_recognition", "pii_redaction", "sentiment_analysis"} {
			env := envelope(t, name, res[name])
			code, exc, msg := addonErr(env)
			if env["success"] != false || code != 422 || exc != "UnsupportedLanguage" ||
				msg != name+" reads only en on this appliance; the transcript's language is fr" {
				t.Errorf("%s on French: %v", name, env)
			}
		}
	})
	t.Run("pre-recorded English", func(t *testing.T) {
		res := run(t, langs("en", "fr"))
		if l := res["transcription"].(map[string]any)["languages"]; fmt.Sprint(l) != "[en]" {
			t.Fatalf("transcription languages %v, want [en]", l)
		}
		for _, name := range []string{"named_entity_recognition", "pii_redaction", "sentiment_analysis"} {
			if env := envelope(t, name, res[name]); env["success"] != true || env["error"] != nil {
				t.Errorf("%s on English: %v", name, env)
			}
		}
	})

	live := func(t *testing.T) (msgs []liveMsg, job map[string]any) {
		t.Helper()
		s := d.createLive(key, map[string]any{"language_config": langs("en", "fr"),
			"realtime_processing": map[string]any{"named_entity_recognition": true, "sentiment_analysis": true},
			"post_processing":     map[string]any{"summarization": true}})
		msgs, code := runSession(t, s.URL, pcmOf(t, path), 32, 0)
		if code != 1000 {
			t.Fatalf("close %d", code)
		}
		d.do("GET", "/v2/live/"+s.ID, key, nil, "", &job)
		if job["status"] != "done" {
			t.Fatalf("live job %v", job)
		}
		return msgs, job["result"].(map[string]any)
	}
	for _, lang := range []string{"fr", "en"} {
		t.Run("live "+lang, func(t *testing.T) {
			if lang == "fr" {
				sv.mode.Store("french")
				defer sv.mode.Store("ok")
			}
			msgs, res := live(t)
			counts := map[string]int{}
			for _, m := range msgs {
				if m.Type != "named_entity_recognition" && m.Type != "sentiment_analysis" && m.Type != "post_summarization" {
					continue
				}
				counts[m.Type]++
				var e map[string]any
				json.Unmarshal(m.Error, &e)
				want := fmt.Sprintf("%s reads only en on this appliance; the transcript's language is fr", strings.TrimPrefix(m.Type, "post_"))
				if lang == "fr" && (e["status_code"] != 422.0 || e["exception"] != "UnsupportedLanguage" || e["message"] != want) ||
					lang == "en" && e != nil {
					t.Errorf("%s on %s: %s", m.Type, lang, m.raw)
				}
			}
			if counts["named_entity_recognition"] == 0 || counts["sentiment_analysis"] == 0 || counts["post_summarization"] != 1 {
				t.Fatalf("messages %v", counts)
			}
			for _, name := range []string{"named_entity_recognition", "sentiment_analysis", "summarization"} {
				env := envelope(t, name, res[name])
				code, exc, _ := addonErr(env)
				if lang == "fr" && (env["success"] != false || code != 422 || exc != "UnsupportedLanguage") || lang == "en" && env["success"] != true {
					t.Errorf("%s envelope on %s: %v", name, lang, env)
				}
			}
		})
	}
}
