package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// addonTurns alternate the LJ Speech reader (a woman) and LibriSpeech
// speaker 1089 (a man): the mono two-speaker file for diarization by voice.
var addonTurns = []speakerTurn{
	{0, "ljspeech-LJ001-0001.wav"},
	{1, "ls-test-clean-1089-134686-0000.wav"},
	{0, "ljspeech-LJ001-0003.wav"},
	{1, "ls-test-clean-1089-134691-0001.wav"},
	{0, "ljspeech-LJ001-0005.wav"},
}

// shortTurns are three short turns of the same two speakers (16 s of
// speech): enough for a case whose speaker count the request fixes
// (TestEveryRequestField's number_of_speakers, max_speakers and
// min_speakers), at a third of addonTurns' decoding.
var shortTurns = []speakerTurn{
	{0, "ljspeech-LJ001-0004.wav"},
	{1, "ls-test-clean-1089-134691-0001.wav"},
	{0, "ljspeech-LJ001-0006.wav"},
}

// speakerTurn is one clip of a speaker in a built file.
type speakerTurn struct {
	speaker int
	file    string
}

// turnSpan is where one clip of the built file lies, and who speaks it.
type turnSpan struct {
	file       string
	speaker    int
	start, end float64
}

// twoSpeakerFile writes the clips of addonTurns one after the other with a
// second of silence between them.
func twoSpeakerFile(t *testing.T) (string, []turnSpan) {
	t.Helper()
	return turnsFile(t, addonTurns)
}

// turnsFile writes the clips of turns one after the other with a second
// of silence between them.
func turnsFile(t *testing.T, turns []speakerTurn) (string, []turnSpan) {
	t.Helper()
	var pcm []int16
	var spans []turnSpan
	gap := make([]int16, 16000)
	for _, tr := range turns {
		path, _ := clip(t, tr.file)
		ch := recognizertest.ReadWAV16(t, path)[0]
		start := float64(len(pcm)) / 16000
		pcm = append(pcm, ch...)
		spans = append(spans, turnSpan{tr.file, tr.speaker, start, float64(len(pcm)) / 16000})
		pcm = append(pcm, gap...)
	}
	out := filepath.Join(t.TempDir(), "two-speakers.wav")
	writeWAV16(t, out, 1, pcm)
	return out, spans
}

// maxE2EDiarizationError bounds the share of speech time given to the
// wrong speaker on the two-speaker file: measured 0.000 through the
// daemon (2026-11-21), plus a margin for segmentation differences.
const maxE2EDiarizationError = 0.10

// every built-in add-on, plus the two that need a backend.
func allAddons(audioURL string) map[string]any {
	return map[string]any{
		"audio_url":                audioURL,
		"custom_spelling":          true,
		"custom_spelling_config":   map[string]any{"spelling_dictionary": map[string]any{"flour": []string{"flower"}}},
		"custom_vocabulary":        []any{"mutton", map[string]any{"value": "turnips", "intensity": 0.8}},
		"punctuation_enhanced":     true,
		"diarization":              true,
		"named_entity_recognition": true,
		"pii_redaction":            true,
		"pii_redaction_config":     map[string]any{"entity_types": []string{"GDPR", "LOCATION", "NOT_A_TYPE"}},
		"sentences":                true,
		"subtitles":                true,
		"subtitles_config":         map[string]any{"formats": []string{"srt", "vtt"}},
		"sentiment_analysis":       true,
		"summarization":            true,
		"summarization_config":     map[string]any{"type": "bullet_points"},
		"translation":              true,
		"translation_config":       map[string]any{"target_languages": []string{"fr"}},
		"audio_to_llm":             true,
		"audio_to_llm_config":      map[string]any{"prompts": []string{"Who speaks?"}},
	}
}

// submit uploads path, creates a pre-recorded job with body and waits for it.
func submit(t *testing.T, d *daemonProc, key, path string, body func(url string) map[string]any) map[string]any {
	t.Helper()
	status, up, b := d.upload(key, path)
	if status != 200 {
		t.Fatalf("upload: %d %s", status, b)
	}
	var created struct{ ID string }
	if status, b := d.postJSON("/v2/pre-recorded", key, body(up.AudioURL), &created); status != 201 {
		t.Fatalf("POST /v2/pre-recorded: %d %s", status, b)
	}
	job := d.waitJob(key, created.ID, 2*time.Minute)
	if job["status"] != "done" {
		t.Fatalf("job %v: %v", job["status"], job)
	}
	return job
}

// envelope checks the add-on envelope's five fields and returns it.
func envelope(t *testing.T, name string, v any) map[string]any {
	t.Helper()
	env, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: no envelope (%v)", name, v)
	}
	for _, k := range []string{"success", "is_empty", "exec_time", "error", "results"} {
		if _, ok := env[k]; !ok {
			t.Errorf("%s: envelope lacks %s", name, k)
		}
	}
	if len(env) != 5 {
		t.Errorf("%s: envelope has %d fields", name, len(env))
	}
	return env
}

func addonErr(env map[string]any) (int, string, string) {
	e, _ := env["error"].(map[string]any)
	if e == nil {
		return 0, "", ""
	}
	code, _ := e["status_code"].(float64)
	return int(code), fmt.Sprint(e["exception"]), fmt.Sprint(e["message"])
}

// checkSubtitles has ffmpeg read each subtitle file and write it as ASS,
// and checks it found every cue.
func checkSubtitles(t *testing.T, subs []any, formats ...string) {
	t.Helper()
	if len(subs) != len(formats) {
		t.Fatalf("%d subtitle files, want %v", len(subs), formats)
	}
	cue := regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d[,.]\d{3} --> \d\d:\d\d:\d\d[,.]\d{3}`)
	for i, s := range subs {
		s := s.(map[string]any)
		text, _ := s["subtitles"].(string)
		if s["format"] != formats[i] {
			t.Errorf("subtitle %d format %v, want %s", i, s["format"], formats[i])
		}
		in := filepath.Join(t.TempDir(), "captions."+formats[i])
		out := filepath.Join(t.TempDir(), "captions.ass")
		if err := os.WriteFile(in, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if b, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", in, out).CombinedOutput(); err != nil || len(b) > 0 {
			t.Errorf("ffmpeg rejects the %s file: %v %s\n%s", formats[i], err, b, text)
			continue
		}
		ass, _ := os.ReadFile(out)
		cues := len(cue.FindAllString(text, -1))
		if n := strings.Count(string(ass), "\nDialogue:"); cues == 0 || n != cues {
			t.Errorf("%s: ffmpeg read %d of %d cues", formats[i], n, cues)
		}
	}
}

// TestAddons runs every built-in add-on on a real recording through the
// daemon, without a language-model backend, pre-recorded and live.
func TestAddons(t *testing.T) {
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	path, spans := twoSpeakerFile(t)

	t.Run("pre-recorded", func(t *testing.T) {
		job := submit(t, d, key, path, allAddons)
		res := job["result"].(map[string]any)
		tr := res["transcription"].(map[string]any)
		full := tr["full_transcript"].(string)
		utts := tr["utterances"].([]any)
		t.Logf("transcript: %s", full)

		if !strings.Contains(full, "flour") || strings.Contains(strings.ToLower(full), "flower") {
			t.Errorf("custom_spelling: flower not written flour")
		}
		if meta, _ := job["post_session_metadata"].(map[string]any); !strings.Contains(fmt.Sprint(meta["custom_vocabulary"]), "sphinx's dictionary") {
			t.Errorf("custom_vocabulary: post_session_metadata %v", meta)
		}
		if !strings.Contains(full, ".") || full[0] < 'A' || full[0] > 'Z' {
			t.Errorf("punctuation_enhanced: %s", full)
		}

		// Diarization by voice: every utterance has a speaker; compare with
		// who really speaks at its midpoint.
		env := envelope(t, "diarization", res["diarization"])
		if env["success"] != true || len(env["results"].([]any)) != len(utts) {
			t.Errorf("diarization envelope: %v", env["error"])
		}
		wrong, total := map[[2]int]float64{}, 0.0
		var hyp, ref []int
		for i, u := range utts {
			u := u.(map[string]any)
			sp, ok := u["speaker"].(float64)
			if !ok {
				t.Fatalf("utterance %d has no speaker", i)
			}
			mid := (u["start"].(float64) + u["end"].(float64)) / 2
			truth := -1
			for _, s := range spans {
				if mid >= s.start && mid <= s.end {
					truth = s.speaker
				}
			}
			dur := u["end"].(float64) - u["start"].(float64)
			wrong[[2]int{int(sp), truth}] += dur
			total += dur
			hyp, ref = append(hyp, int(sp)), append(ref, truth)
		}
		// Two speakers: the better of the two labellings.
		same := wrong[[2]int{0, 0}] + wrong[[2]int{1, 1}]
		swapped := wrong[[2]int{0, 1}] + wrong[[2]int{1, 0}]
		der := (total - max(same, swapped)) / total
		t.Logf("diarization error %.3f: truth %v, found %v", der, ref, hyp)
		if der > maxE2EDiarizationError || slices.Max(hyp) != 1 {
			t.Errorf("diarization error %.3f > %.2f, or %d speakers", der, maxE2EDiarizationError, slices.Max(hyp)+1)
		}

		// "netherlands" (LJ001-0003, about 7.1 s into the clip) is a
		// location: found at its time, then redacted everywhere.
		env = envelope(t, "named_entity_recognition", res["named_entity_recognition"])
		lj3 := spans[2]
		found := false
		for _, e := range env["results"].([]any) {
			e := e.(map[string]any)
			start, end := e["start"].(float64), e["end"].(float64)
			if e["entity_type"] == "LOCATION" && start > lj3.start+6.5 && end < lj3.start+8.5 && end > start {
				found = true
				if e["text"] != "[LOCATION]" {
					t.Errorf("redacted entity's text in NER results: %v", e["text"])
				}
			}
		}
		if !found {
			t.Errorf("no LOCATION near %.1f s: %v", lj3.start+7.1, env["results"])
		}
		env = envelope(t, "pii_redaction", res["pii_redaction"])
		if code, exc, msg := addonErr(env); code != 422 || exc != "UnsupportedEntityType" || !strings.Contains(msg, "NOT_A_TYPE") {
			t.Errorf("pii_redaction error %d %s %q", code, exc, msg)
		}
		b, _ := json.Marshal(res)
		if strings.Contains(strings.ToLower(string(b)), "netherlands") {
			t.Errorf("pii_redaction: netherlands survives in the result")
		}
		if !strings.Contains(full, "[LOCATION]") {
			t.Errorf("pii_redaction: no marker")
		}
		words := 0
		for _, u := range utts {
			for _, w := range u.(map[string]any)["words"].([]any) {
				words++
				if strings.Contains(strings.ToLower(w.(map[string]any)["word"].(string)), "netherlands") {
					t.Errorf("pii_redaction: a word still reads netherlands")
				}
			}
		}

		env = envelope(t, "sentences", res["sentences"])
		if ss, _ := env["results"].([]any); len(ss) < 2 || env["success"] != true {
			t.Errorf("sentences: %v", env)
		}
		if inner, _ := tr["sentences"].([]any); len(inner) != 1 {
			t.Errorf("transcription.sentences: %v", tr["sentences"])
		} else {
			envelope(t, "transcription.sentences", inner[0])
		}
		subs, _ := tr["subtitles"].([]any)
		checkSubtitles(t, subs, "srt", "vtt")

		env = envelope(t, "sentiment_analysis", res["sentiment_analysis"])
		var list []struct {
			Sentiment, Emotion, Text string
			Start, End               float64
			Channel                  int
		}
		if s, ok := env["results"].(string); !ok || json.Unmarshal([]byte(s), &list) != nil || len(list) != len(utts) {
			t.Errorf("sentiment_analysis results %v", env["results"])
		}
		for _, s := range list {
			if !slices.Contains([]string{"positive", "negative", "neutral", "mixed"}, s.Sentiment) || s.End <= s.Start {
				t.Errorf("sentiment %+v", s)
			}
		}
		env = envelope(t, "summarization", res["summarization"])
		if s, _ := env["results"].(string); env["success"] != true || !strings.HasPrefix(s, "- ") {
			t.Errorf("summarization: %v", env)
		}
		for _, name := range []string{"translation", "audio_to_llm"} {
			env := envelope(t, name, res[name])
			if code, exc, _ := addonErr(env); code != 501 || exc != "NotConfigured" || env["success"] != false {
				t.Errorf("%s without backend: %v", name, env)
			}
		}
	})

	t.Run("stereo", func(t *testing.T) {
		stereo, _ := clip(t, "stereo-two-speaker-librispeech.wav")
		job := submit(t, d, key, stereo, func(url string) map[string]any { return map[string]any{"audio_url": url, "diarization": true} })
		res := job["result"].(map[string]any)
		envelope(t, "diarization", res["diarization"])
		channels := map[float64]bool{}
		for _, u := range res["transcription"].(map[string]any)["utterances"].([]any) {
			u := u.(map[string]any)
			if u["speaker"] != u["channel"] {
				t.Errorf("speaker %v on channel %v", u["speaker"], u["channel"])
			}
			channels[u["channel"].(float64)] = true
		}
		if len(channels) != 2 {
			t.Errorf("channels %v", channels)
		}
	})

	t.Run("live", func(t *testing.T) {
		msgs, job := liveAddonsSession(t, d, key)
		finals := 0
		counts := map[string]int{}
		for _, m := range msgs {
			counts[m.Type]++
			var data map[string]any
			json.Unmarshal(m.Data, &data)
			switch m.Type {
			case "transcript":
				if data["is_final"] == true {
					finals++
				}
			case "translation":
				var e map[string]any
				json.Unmarshal(m.Error, &e)
				if e["status_code"] != 501.0 || data["translated_utterance"] != nil {
					t.Errorf("translation without backend: %s", m.raw)
				}
			case "named_entity_recognition", "sentiment_analysis":
				if string(m.Error) != "null" || data["results"] == nil || data["utterance_id"] == nil {
					t.Errorf("%s: %s", m.Type, m.raw)
				}
			case "post_summarization":
				if s, _ := data["results"].(string); s == "" || string(m.Error) != "null" {
					t.Errorf("post_summarization: %s", m.raw)
				}
			case "post_chapterization":
				if cs, _ := data["results"].([]any); len(cs) == 0 || string(m.Error) != "null" {
					t.Errorf("post_chapterization: %s", m.raw)
				}
			}
		}
		if finals == 0 || counts["named_entity_recognition"] != finals || counts["sentiment_analysis"] != finals || counts["translation"] != finals ||
			counts["post_summarization"] != 1 || counts["post_chapterization"] != 1 {
			t.Errorf("%d finals, messages %v", finals, counts)
		}
		checkLiveResult(t, job)
	})
}

// liveAddonsSession streams LJ001-0003 to a live session with every
// realtime and post-processing add-on and returns its messages and job.
func liveAddonsSession(t *testing.T, d *daemonProc, key string) ([]liveMsg, map[string]any) {
	t.Helper()
	path, _ := clip(t, "ljspeech-LJ001-0003.wav")
	s := d.createLive(key, map[string]any{
		"realtime_processing": map[string]any{
			"custom_spelling":          true,
			"custom_spelling_config":   map[string]any{"spelling_dictionary": map[string]any{"woodblocks": []string{"wooden blocks", "wood blocks", "one blocks"}}},
			"named_entity_recognition": true,
			"sentiment_analysis":       true,
			"translation":              true,
			"translation_config":       map[string]any{"target_languages": []string{"fr"}},
		},
		"post_processing": map[string]any{"summarization": true, "chapterization": true},
	})
	msgs, code := runSession(t, s.URL, pcmOf(t, path), 32, 0)
	if code != 1000 {
		t.Fatalf("close code %d", code)
	}
	var job map[string]any
	d.do("GET", "/v2/live/"+s.ID, key, nil, "", &job)
	if job["status"] != "done" {
		t.Fatalf("live job %v", job["status"])
	}
	// The order at stop (PROTOCOL.md): post_transcript, add-on messages,
	// post_final_transcript.
	var types []string
	for _, m := range msgs {
		types = append(types, m.Type)
	}
	pt, ps, pc, pf := slices.Index(types, "post_transcript"), slices.Index(types, "post_summarization"),
		slices.Index(types, "post_chapterization"), slices.Index(types, "post_final_transcript")
	if !(pt >= 0 && pt < ps && ps < pc && pc < pf) {
		t.Errorf("message order %v", types)
	}
	return msgs, job
}

// checkLiveResult checks the live job's result carries the finals with the
// custom spelling and the post-processing envelopes.
func checkLiveResult(t *testing.T, job map[string]any) {
	t.Helper()
	res := job["result"].(map[string]any)
	full := res["transcription"].(map[string]any)["full_transcript"].(string)
	t.Logf("live transcript: %s", full)
	// The variants are how the engine renders "wood blocks" in the live
	// decode modes (second pass on or off, one-pass or incremental finals).
	if !strings.Contains(full, "woodblocks") || strings.Contains(full, "wood blocks") || strings.Contains(full, "wooden blocks") || strings.Contains(full, "one blocks") {
		t.Errorf("custom_spelling not applied to the finals: %s", full)
	}
	for _, name := range []string{"summarization", "chapterization"} {
		if env := envelope(t, name, res[name]); env["success"] != true {
			t.Errorf("%s envelope: %v", name, env)
		}
	}
}
