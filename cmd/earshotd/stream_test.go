package main

import (
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/ingest/media"
)

// TestOpenAudio: a WAV file gives its format and only its data chunk's
// bytes (to the end when the header says the length is unknown); other
// bytes are raw audio in the flags' format, which must name an encoding;
// what a live session cannot take is refused before anything is sent.
func TestOpenAudio(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	samples := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	mulaw := media.Format{Encoding: media.MuLaw, BitDepth: 8, SampleRate: 8000, Channels: 2}
	withTrailer := append(media.AppendWAVHeader(nil, mulaw, int64(len(samples))), samples...)
	withTrailer = append(withTrailer, "LIST\x04\x00\x00\x00abcd"...) // a chunk after the data: not audio
	unknownLen := append(media.AppendWAVHeader(nil, media.Format{Encoding: media.LinearPCM, BitDepth: 16, SampleRate: 44100, Channels: 1}, -1), samples...)
	float := media.AppendWAVHeader(nil, media.Format{Encoding: media.LinearPCM, BitDepth: 32, SampleRate: 16000, Channels: 1}, 8)
	binary.LittleEndian.PutUint16(float[20:22], 3) // WAVE_FORMAT_IEEE_FLOAT
	float = append(float, samples...)

	tests := []struct {
		name    string
		path    string
		raw     liveFormat
		want    liveFormat
		data    []byte
		wantErr string
	}{
		{"mu-law wav, trailing chunk", write("a.wav", withTrailer), liveFormat{}, liveFormat{"wav/ulaw", 8000, 8, 2}, samples, ""},
		{"pcm wav of unknown length", write("b.wav", unknownLen), liveFormat{}, liveFormat{"wav/pcm", 44100, 16, 1}, samples, ""},
		{"raw pcm", write("c.raw", samples), liveFormat{"wav/pcm", 16000, 0, 1}, liveFormat{"wav/pcm", 16000, 16, 1}, samples, ""},
		{"raw alaw", write("d.raw", samples), liveFormat{"wav/alaw", 8000, 0, 1}, liveFormat{"wav/alaw", 8000, 8, 1}, samples, ""},
		{"raw without --encoding", write("e.raw", samples), liveFormat{"", 16000, 0, 1}, liveFormat{}, nil, "is not a WAV file"},
		{"wav with --encoding", write("f.wav", withTrailer), liveFormat{"wav/pcm", 16000, 0, 1}, liveFormat{}, nil, "--encoding is for raw audio"},
		{"float wav", write("g.wav", float), liveFormat{}, liveFormat{}, nil, "a live session takes wav/pcm"},
		{"missing", filepath.Join(dir, "none.wav"), liveFormat{}, liveFormat{}, nil, "no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, err := openAudio(tc.path, tc.raw)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			got, err := io.ReadAll(src.r)
			if err != nil {
				t.Fatal(err)
			}
			if src.format != tc.want || string(got) != string(tc.data) {
				t.Errorf("format %+v data %v, want %+v %v", src.format, got, tc.want, tc.data)
			}
		})
	}
}

// TestLiveBody: the --request file's options go through, the audio's
// format is set from the file, partials on and acks off unless the file's
// messages_config says otherwise, and a format in the file is refused.
func TestLiveBody(t *testing.T) {
	dir := t.TempDir()
	req := filepath.Join(dir, "req.json")
	os.WriteFile(req, []byte(`{"custom_metadata":{"a":1},"messages_config":{"receive_acknowledgments":true}}`), 0o600)
	f := liveFormat{"wav/ulaw", 8000, 8, 1}
	body, err := liveBody(req, f)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(body)
	var got struct {
		CustomMetadata map[string]int  `json:"custom_metadata"`
		Encoding       string          `json:"encoding"`
		SampleRate     int             `json:"sample_rate"`
		BitDepth       int             `json:"bit_depth"`
		MessagesConfig map[string]bool `json:"messages_config"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.CustomMetadata["a"] != 1 || got.Encoding != "wav/ulaw" || got.SampleRate != 8000 || got.BitDepth != 8 ||
		!got.MessagesConfig["receive_partial_transcripts"] || !got.MessagesConfig["receive_acknowledgments"] {
		t.Errorf("body %s", b)
	}
	os.WriteFile(req, []byte(`{"encoding":"wav/pcm"}`), 0o600)
	if _, err := liveBody(req, f); err == nil || !strings.Contains(err.Error(), "must not carry encoding") {
		t.Errorf("a format in --request: %v", err)
	}
}

// TestClientKey: --key, else EARSHOT_KEY, else .data/first-key of the
// working directory; none is an error saying where a key comes from.
func TestClientKey(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv(envKey, "")
	t.Setenv(envURL, "")
	if _, err := (&clientFlags{}).client(); err == nil || !strings.Contains(err.Error(), "no API key") {
		t.Fatalf("no key: %v", err)
	}
	os.Mkdir(".data", 0o700)
	os.WriteFile(firstKeyFile, []byte("es_file\n"), 0o600)
	c, err := (&clientFlags{}).client()
	if err != nil || c.key != "es_file" || c.base != defaultURL {
		t.Fatalf("from the file: %+v %v", c, err)
	}
	t.Setenv(envKey, "es_env")
	t.Setenv(envURL, "https://box.example:8443/")
	if c, _ := (&clientFlags{}).client(); c.key != "es_env" || c.base != "https://box.example:8443" {
		t.Errorf("from the environment: %+v", c)
	}
	if c, _ := (&clientFlags{key: "es_flag", url: "http://h:1"}).client(); c.key != "es_flag" || c.base != "http://h:1" {
		t.Errorf("from the flags: %+v", c)
	}
	if _, err := (&clientFlags{url: "ftp://h"}).client(); err == nil {
		t.Error("ftp URL taken")
	}
}

// TestStreamPrinter: finals as "[start-end] text" lines, partials after
// "~ " (rewritten in place on a terminal, the text's end kept), the
// daemon's error messages on stderr, and with --json every message as
// sent, one a line.
func TestStreamPrinter(t *testing.T) {
	partial := `{"type":"transcript","data":{"is_final":false,"utterance":{"start":0.5,"end":1,"channel":0,"text":"go for"}}}`
	final := `{"type":"transcript","data":{"is_final":true,"utterance":{"start":0.5,"end":1.25,"channel":1,"text":"go forward"}}}`
	long := `{"type":"transcript","data":{"is_final":false,"utterance":{"start":2,"end":9,"channel":0,"text":"` + strings.Repeat("word ", 20) + `end"}}}`
	errMsg := `{"type":"error","error":{"message":"engine fell back"}}`
	ack := `{"type":"audio_chunk","acknowledged":true}`
	run := func(p *streamPrinter, msgs ...string) {
		t.Helper()
		for _, m := range msgs {
			if err := p.message([]byte(m)); err != nil {
				t.Fatal(err)
			}
		}
		p.endLine()
	}
	var out, errOut strings.Builder
	run(&streamPrinter{w: &out, errw: &errOut, channels: 2}, partial, ack, final, errMsg)
	if want := "~ [   0.50-   1.00 ch0] go for\n[   0.50-   1.25 ch1] go forward\n"; out.String() != want || errOut.String() != "stream: the daemon says: engine fell back\n" {
		t.Errorf("plain: %q %q", out.String(), errOut.String())
	}
	out.Reset()
	run(&streamPrinter{w: &out, errw: &errOut, channels: 1, tty: true}, partial, final, long)
	lines := strings.Split(out.String(), "\r\x1b[K")
	if len(lines) != 5 || lines[1] != "~ [   0.50-   1.00] go for" || lines[2] != "[   0.50-   1.25] go forward\n" ||
		!strings.HasPrefix(lines[3], "~ [   2.00-   9.00] …") || !strings.HasSuffix(lines[3], "word end") || len([]rune(lines[3])) != partialWidth || lines[4] != "" {
		t.Errorf("terminal: %q", lines)
	}
	out.Reset()
	run(&streamPrinter{w: &out, errw: &errOut, json: true}, partial, ack)
	if out.String() != partial+"\n"+ack+"\n" {
		t.Errorf("json: %q", out.String())
	}
}
