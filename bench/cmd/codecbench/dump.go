package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/earshot-dev/earshot/bench/internal/benchd"
)

// sessionName names one path's session of clip c in files and uploads.
func sessionName(p path, c clip) string {
	return strings.NewReplacer(" ", "_", "(", "", ")", "", ",", "", ".", "").Replace(p.name) + "-" + strings.TrimSuffix(filepath.Base(c.File), filepath.Ext(c.File))
}

// preRecorded sends the recording the door made of session id as a
// pre-recorded job and returns the recording and the job's transcript: the
// batch decode of the same audio through the pre-recorded door.
func (b *bench) preRecorded(p path, c clip, id string) (audio []byte, transcript string, err error) {
	audio, err = b.d.LiveAudio(id)
	if err != nil {
		return nil, "", err
	}
	_, transcript, err = b.d.PreRecorded(sessionName(p, c)+".wav", audio, 200*time.Millisecond, 5*time.Minute)
	return audio, transcript, err
}

// dump writes one session's diagnosis to dir: the reference, the live
// finals, the stored record, the recording the door made, and the
// recording's transcript as a pre-recorded job (the same audio through the
// pre-recorded door), as <path>-<clip>.json and .wav.
func (b *bench) dump(dir string, p path, c clip, id string, rec benchd.LiveRecord, audio []byte, pre string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	name := sessionName(p, c)
	if err := os.WriteFile(filepath.Join(dir, name+".wav"), audio, 0o644); err != nil {
		return err
	}
	var job json.RawMessage
	if err := b.d.Call("GET", "/v2/live/"+id, b.d.Key, "", http.StatusOK, &job); err != nil {
		return err
	}
	out, err := json.MarshalIndent(map[string]any{
		"clip": c.File, "reference": c.Transcript, "finals": rec.Finals, "record": rec.FullTranscript,
		"prerecorded_of_recording": pre, "job": job,
	}, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name+".json"), out, 0o644)
}
