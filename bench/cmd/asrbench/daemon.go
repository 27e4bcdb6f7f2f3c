package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/zaf/g711"
	"golang.org/x/sync/errgroup"

	"github.com/earshot-dev/earshot/bench/internal/benchd"
)

// rendition is one way the test clips reach the daemon.
type rendition struct {
	name     string // "16 kHz PCM", "G.711 mu-law 8 kHz", ...
	encoding string // live encoding parameter
	rate     int
	tag      uint16 // WAV format tag
	// audio turns a clip file into the bytes a client would send.
	audio func(path string) ([]byte, error)
}

var renditions = []rendition{
	{"16 kHz PCM", "wav/pcm", 16000, 1, pcm16},
	{"G.711 mu-law 8 kHz", "wav/ulaw", 8000, 7, func(p string) ([]byte, error) { return g711Of(p, g711.EncodeUlaw) }},
	{"G.711 A-law 8 kHz", "wav/alaw", 8000, 6, func(p string) ([]byte, error) { return g711Of(p, g711.EncodeAlaw) }},
}

// pcm16 is the clip's 16-bit samples (the test set is 16 kHz mono WAV).
func pcm16(path string) ([]byte, error) {
	return exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", path, "-ar", "16000", "-ac", "1", "-f", "s16le", "-").Output()
}

// g711Of resamples the clip to 8 kHz with ffmpeg and encodes it with
// zaf/g711, as a phone would send it.
func g711Of(path string, enc func([]byte) []byte) ([]byte, error) {
	pcm, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", path, "-ar", "8000", "-ac", "1", "-f", "s16le", "-").Output()
	if err != nil {
		return nil, fmt.Errorf("ffmpeg %s: %w", path, err)
	}
	return enc(pcm), nil
}

// wavOf wraps audio of rendition r in a canonical WAV header.
func wavOf(r rendition, audio []byte) []byte {
	bps := 2
	if r.tag != 1 {
		bps = 1
	}
	var b bytes.Buffer
	b.WriteString("RIFF")
	binary.Write(&b, binary.LittleEndian, uint32(36+len(audio)))
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), r.tag, uint16(1), uint32(r.rate), uint32(r.rate * bps), uint16(bps), uint16(8 * bps)} {
		binary.Write(&b, binary.LittleEndian, v)
	}
	b.WriteString("data")
	binary.Write(&b, binary.LittleEndian, uint32(len(audio)))
	b.Write(audio)
	return b.Bytes()
}

// runDaemon measures the real daemon on every rendition of the clips: a
// pre-recorded job of each clip (upload, POST /v2/pre-recorded) and a live
// WebSocket session of each (default session settings, audio sent as fast
// as the socket takes it: the recogniser's output does not depend on the
// pace), WER of the job transcripts, of the live finals joined, and of
// the session's stored record once its batch pass has replaced it. Two
// clips go at a time, as two decoders serve them.
func runDaemon(clips []clip) ([]row, error) {
	d, err := benchd.Start("live:\n  capacity: 16\n", "--decoders", "2")
	if err != nil {
		return nil, err
	}
	defer d.Stop()
	var rows []row
	for _, r := range renditions {
		batch := row{name: "earshot pre-recorded (daemon), " + r.name}
		live := row{name: "earshot live (WebSocket finals), " + r.name}
		stored := row{name: "earshot live stored record (batch pass), " + r.name}
		texts := make([][3]string, len(clips))
		start := time.Now()
		var g errgroup.Group
		g.SetLimit(2)
		for i, c := range clips {
			g.Go(func() error {
				audio, err := r.audio(c.Path)
				if err != nil {
					return err
				}
				if texts[i][0], err = prerecorded(d, wavOf(r, audio), c.File); err != nil {
					return fmt.Errorf("%s %s pre-recorded: %w", r.name, c.File, err)
				}
				var id string
				if texts[i][1], id, err = liveFinals(d, r, audio); err != nil {
					return fmt.Errorf("%s %s live: %w", r.name, c.File, err)
				}
				if texts[i][2], err = storedRecord(d, id); err != nil {
					return fmt.Errorf("%s %s stored record: %w", r.name, c.File, err)
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
		batch.wall = time.Since(start)
		for i, c := range clips {
			addErrors(&batch, c.Transcript, texts[i][0])
			addErrors(&live, c.Transcript, texts[i][1])
			addErrors(&stored, c.Transcript, texts[i][2])
		}
		rows = append(rows, batch, live, stored)
	}
	return rows, nil
}

// prerecorded uploads wav, runs a pre-recorded job and returns its
// full_transcript.
func prerecorded(d *benchd.Daemon, wav []byte, name string) (string, error) {
	_, text, err := d.PreRecorded(filepath.Base(name), wav, 200*time.Millisecond, 10*time.Minute)
	return text, err
}

// storedRecord waits for a live session's batch pass and returns the
// stored record's full_transcript.
func storedRecord(d *benchd.Daemon, id string) (string, error) {
	rec, err := d.BatchPassRecord(id, 10*time.Minute)
	return rec.FullTranscript, err
}

// liveFinals streams audio to a new live session in 20 ms frames, stops
// the recording and returns the final transcripts joined in order, and
// the session's id.
func liveFinals(d *benchd.Daemon, r rendition, audio []byte) (string, string, error) {
	body, _ := json.Marshal(map[string]any{"encoding": r.encoding, "sample_rate": r.rate, "bit_depth": map[bool]int{true: 16, false: 8}[r.tag == 1]})
	var s struct{ ID, URL string }
	if err := d.Call("POST", "/v2/live", d.Key, string(body), http.StatusCreated, &s); err != nil {
		return "", "", err
	}
	c, resp, err := websocket.DefaultDialer.Dial(s.URL, nil)
	if resp != nil {
		resp.Body.Close()
	}
	if err != nil {
		return "", "", err
	}
	defer c.Close()
	var finals []string
	done := make(chan error, 1)
	go func() {
		for {
			_, b, err := c.ReadMessage()
			if err != nil {
				if websocket.IsCloseError(err, websocket.CloseNormalClosure) {
					err = nil
				}
				done <- err
				return
			}
			if text, ok := benchd.FinalText(b); ok {
				finals = append(finals, text)
			}
		}
	}()
	step := r.rate / 50 // 20 ms of samples
	if r.tag == 1 {
		step *= 2
	}
	for i := 0; i < len(audio); i += step {
		if err := c.WriteMessage(websocket.BinaryMessage, audio[i:min(i+step, len(audio))]); err != nil {
			return "", "", err
		}
	}
	if err := c.WriteJSON(map[string]string{"type": "stop_recording"}); err != nil {
		return "", "", err
	}
	select {
	case err := <-done:
		return strings.Join(finals, " "), s.ID, err
	case <-time.After(10 * time.Minute):
		return "", "", fmt.Errorf("session did not end")
	}
}
