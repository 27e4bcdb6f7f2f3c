package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// transcribeCLI runs `earshotd transcribe` with args and returns its
// stdout, stderr and error.
func transcribeCLI(t *testing.T, args ...string) ([]byte, string, error) {
	t.Helper()
	cmd := exec.Command(earshotd, append([]string{"transcribe"}, args...)...)
	cmd.Env = append(os.Environ(), "EARSHOT_LOG_LEVEL=warn")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.Bytes(), errb.String(), err
}

// TestTranscribeCommand: `earshotd transcribe` takes the daemon's
// configuration (a remote engine routed by language) and a request's
// options (add-ons), and refuses what POST /v2/pre-recorded refuses.
func TestTranscribeCommand(t *testing.T) {
	sv, url := startStandin(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "earshot.yaml")
	if err := os.WriteFile(cfg, []byte(engineConfig(url, false)), 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	audio, _ := clip(t, "pocketsphinx-goforward.wav")

	// French is served by the remote engine only: the job goes there, and
	// custom_spelling and subtitles run on its text.
	req := write("fr.json", `{"language_config":{"languages":["fr"]},"custom_spelling":true,`+
		`"custom_spelling_config":{"spelling_dictionary":{"gamma":["beta"]}},"subtitles":true,"subtitles_config":{"formats":["vtt"]}}`)
	out, stderr, err := transcribeCLI(t, "--config", cfg, "--request", req, audio)
	if err != nil {
		t.Fatalf("transcribe: %v\n%s", err, stderr)
	}
	var got struct {
		Result struct {
			Transcription struct {
				FullTranscript string `json:"full_transcript"`
				Languages      []string
				Subtitles      []struct{ Format, Subtitles string }
			}
		}
		RequestParams       map[string]any `json:"request_params"`
		PostSessionMetadata map[string]any `json:"post_session_metadata"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("output: %v\n%s", err, out)
	}
	tr := got.Result.Transcription
	if got.PostSessionMetadata["engine"] != "gpu" || len(sv.requests()) == 0 || sv.requests()[0]["language"] != "fr" {
		t.Errorf("engine %v, stand-in requests %v: want the remote engine, in fr", got.PostSessionMetadata["engine"], sv.requests())
	}
	if !strings.Contains(tr.FullTranscript, "alpha gamma") || strings.Join(tr.Languages, " ") != "fr" {
		t.Errorf("transcript %q in %v: want custom_spelling applied to the remote engine's text, in fr", tr.FullTranscript, tr.Languages)
	}
	if len(tr.Subtitles) != 1 || tr.Subtitles[0].Format != "vtt" || !strings.Contains(tr.Subtitles[0].Subtitles, "alpha gamma") {
		t.Errorf("subtitles %+v", tr.Subtitles)
	}
	if got.RequestParams["custom_spelling"] != true {
		t.Errorf("request_params %v", got.RequestParams)
	}

	// No request: the embedded engine, as before.
	out, stderr, err = transcribeCLI(t, audio)
	if err != nil || !bytes.Contains(out, []byte(`"engine": "sphinx"`)) || !bytes.Contains(out, []byte("forward")) {
		t.Errorf("plain transcribe: %v\n%s\n%s", err, out, stderr)
	}

	// What the API refuses, the command refuses, naming the field.
	for _, tc := range []struct{ body, want string }{
		{`{"subtitles":true,"subtitles_config":{"maximum_characters_per_row":5}}`, "subtitles_config.maximum_characters_per_row"},
		{`{"language_config":{"languages":["de"]}}`, "language_config.languages"},
		{`{"diarization":"yes"}`, "diarization"},
		{`{"audio_url":"https://example.com/a.wav"}`, "audio_url"},
	} {
		_, stderr, err := transcribeCLI(t, "--config", cfg, "--request", write("bad.json", tc.body), audio)
		if err == nil || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: err %v, stderr %q; want a refusal naming %s", tc.body, err, stderr, tc.want)
		}
	}
}
