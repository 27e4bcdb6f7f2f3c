package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
	"github.com/earshot-dev/earshot/recognizer/sphinx/telmodel"
)

// werTelephone bounds the word error rate of the telephone-band model on
// the G.711 renditions of TestTelephoneModel's clips through the
// pre-recorded pipeline: measured 0.517 (60 errors in 116 words: 9/28 and
// 24/36 on the mu-law uploads through the daemon, 15/30 and 12/22 on the
// A-law files through `earshotd transcribe`, the same pipeline),
// 2026-11-23; the bound adds about 7 words for run-to-run differences in
// segmentation.
const werTelephone = 0.58

// TestTelephoneModel uploads 8 kHz G.711 renditions (mu-law and A-law WAV,
// made through earshot's resampler and G.711 codec) of testdata clips and
// the same call re-encoded as a 44.1 kHz MP3: each is transcribed with the
// telephone-band model, post_session_metadata says so and why (rate, or
// spectrum for the MP3), and the WER of the renditions is bounded. The
// wideband original still uses Debian's model.
func TestTelephoneModel(t *testing.T) {
	d := startDaemon(t, "", telephoneModel(t)+"  telephone_decoders: 2\n")
	key := createKey(t, d.DataDir, "acme")
	dir := recognizertest.SpeechDir(t)
	refs := map[string]string{}
	for _, c := range recognizertest.Manifest(t) {
		refs[c.File] = c.Transcript
	}
	tmp := t.TempDir()
	type upload struct {
		path, ref, model, band, reason string
		scored                         bool
	}
	var ups []upload
	for i, name := range []string{"ls-test-clean-1089-134686-0000.wav", "ls-dev-clean-2412-153948-0000.wav",
		"ls-test-clean-1995-1837-0001.wav", "librivox-sense-and-sensibility-01-0870.wav"} {
		law := telmodel.Laws[i/2]
		out := filepath.Join(tmp, strings.TrimSuffix(name, ".wav")+"-"+law.String()+".wav")
		if _, err := telmodel.Render(t.Context(), filepath.Join(dir, name), out, law); err != nil {
			t.Fatal(err)
		}
		ups = append(ups, upload{out, refs[name], "en-us-telephone", "telephone", "sample rate below 16 kHz", true})
		if i == 0 {
			mp3 := filepath.Join(tmp, "call.mp3")
			if b, err := exec.CommandContext(t.Context(), "ffmpeg", "-loglevel", "error", "-i", out, "-ar", "44100", "-b:a", "64k", mp3).CombinedOutput(); err != nil {
				t.Fatalf("ffmpeg: %v %s", err, b)
			}
			ups = append(ups, upload{mp3, refs[name], "en-us-telephone", "telephone", "energy above 4 kHz", false})
			ups = append(ups, upload{filepath.Join(dir, name), refs[name], "en-us", "wideband", "energy above 4 kHz", false})
		}
	}
	var errs, words int
	for _, u := range ups {
		job := submit(t, d, key, u.path, func(url string) map[string]any { return map[string]any{"audio_url": url} })
		psm, _ := job["post_session_metadata"].(map[string]any)
		band, _ := psm["audio_band"].(map[string]any)
		if psm["acoustic_model"] != u.model || band["band"] != u.band || !strings.Contains(fmt.Sprint(band["reason"]), u.reason) {
			t.Errorf("%s: post_session_metadata %v, want acoustic_model %s, band %s (%s)", filepath.Base(u.path), psm, u.model, u.band, u.reason)
		}
		text := job["result"].(map[string]any)["transcription"].(map[string]any)["full_transcript"].(string)
		ref := recognizertest.Normalize(u.ref)
		n := recognizertest.EditDistance(ref, recognizertest.Normalize(text))
		t.Logf("%s: %d errors / %d words: %q", filepath.Base(u.path), n, len(ref), text)
		if u.scored {
			errs += n
			words += len(ref)
		}
	}
	wer := float64(errs) / float64(words)
	t.Logf("telephone model on G.711 renditions: WER %.3f (%d/%d)", wer, errs, words)
	if wer > werTelephone {
		t.Errorf("WER %.3f > %.3f", wer, werTelephone)
	}

	// A live 8 kHz mu-law WebSocket session (the form SIP and WebRTC calls
	// reach the recogniser in) decodes with the telephone model too.
	pcm := recognizertest.ReadWAV16(t, filepath.Join(dir, "ls-test-clean-1089-134686-0000.wav"))[0]
	ulaw, err := telmodel.EncodeG711(pcm, 16000, telmodel.MuLaw)
	if err != nil {
		t.Fatal(err)
	}
	s := d.createLive(key, map[string]any{"encoding": "wav/ulaw", "sample_rate": 8000, "bit_depth": 8})
	if _, code := runSession(t, s.URL, ulaw, 8, 0); code != 1000 {
		t.Fatalf("live close code %d, want 1000", code)
	}
	var job map[string]any
	d.do("GET", "/v2/live/"+s.ID, key, nil, "", &job)
	psm, _ := job["post_session_metadata"].(map[string]any)
	band, _ := psm["audio_band"].(map[string]any)
	if job["status"] != "done" || psm["acoustic_model"] != "en-us-telephone" || band["band"] != "telephone" {
		t.Errorf("live 8 kHz session: status %v, post_session_metadata %v", job["status"], psm)
	}
	if res, ok := job["result"].(map[string]any); ok {
		t.Logf("live 8 kHz: %q", res["transcription"].(map[string]any)["full_transcript"])
	}
}

// telephoneModel is a config's sphinx section naming this checkout's
// telephone-band model (built by `make model`), as the .deb installs it
// where the daemon looks by default and `make run` names it: without it an
// e2e daemon decodes calls with the wideband model, a configuration no
// installed daemon runs.
func telephoneModel(t *testing.T) string {
	t.Helper()
	model, err := filepath.Abs("../model/en-us-telephone")
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("sphinx:\n  telephone_hmm: %s\n", model)
}
