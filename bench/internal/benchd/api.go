package benchd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"time"
)

// client bounds every API request of a benchmark, so that a daemon that
// stopped answering fails the benchmark instead of hanging it. Two minutes
// is far above any request a benchmark makes (uploads of a few MB on
// loopback, job and session reads).
var client = &http.Client{Timeout: 2 * time.Minute}

// Request does one API request on the daemon and checks its status: key is
// the x-service-key header ("" sends none), body goes with the content
// type ctype ("" sends none), and out, when not nil, takes the JSON body of
// the answer. It gives up after client's timeout.
func (d *Daemon) Request(method, path, key, ctype string, body io.Reader, want int, out any) error {
	req, err := http.NewRequest(method, d.Base+path, body)
	if err != nil {
		return err
	}
	if key != "" {
		req.Header.Set("x-service-key", key)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// Call is Request with a JSON body ("" sends none).
func (d *Daemon) Call(method, path, key, body string, want int, out any) error {
	ctype := ""
	if body != "" {
		ctype = "application/json"
	}
	return d.Request(method, path, key, ctype, strings.NewReader(body), want, out)
}

// Upload stores audio as a file named name (POST /v2/upload, multipart)
// with the bench key and returns its audio_url.
func (d *Daemon) Upload(name string, audio []byte) (string, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("audio", name)
	fw.Write(audio)
	mw.Close()
	var up struct {
		AudioURL string `json:"audio_url"`
	}
	if err := d.Request("POST", "/v2/upload", d.Key, mw.FormDataContentType(), &buf, http.StatusOK, &up); err != nil {
		return "", err
	}
	if up.AudioURL == "" {
		return "", fmt.Errorf("POST /v2/upload: no audio_url")
	}
	return up.AudioURL, nil
}

// PreRecorded transcribes audio as a /v2 client without callbacks does:
// it uploads it as a file named name, creates a pre-recorded job of it and
// reads the job every poll until it is done (an error after timeout, or
// when the job ends as error). It returns the job's id and its
// full_transcript.
func (d *Daemon) PreRecorded(name string, audio []byte, poll, timeout time.Duration) (id, transcript string, err error) {
	audioURL, err := d.Upload(name, audio)
	if err != nil {
		return "", "", err
	}
	var job struct{ ID string }
	body, _ := json.Marshal(map[string]any{"audio_url": audioURL})
	if err := d.Call("POST", "/v2/pre-recorded", d.Key, string(body), http.StatusCreated, &job); err != nil {
		return "", "", err
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		var rec struct {
			Status string
			Result struct {
				Transcription struct {
					FullTranscript string `json:"full_transcript"`
				}
			}
		}
		if err := d.Call("GET", "/v2/pre-recorded/"+job.ID, d.Key, "", http.StatusOK, &rec); err != nil {
			return "", "", err
		}
		switch rec.Status {
		case "done":
			return job.ID, rec.Result.Transcription.FullTranscript, nil
		case "error":
			return "", "", fmt.Errorf("job %s failed", job.ID)
		}
		time.Sleep(poll) // the client's polling interval, against a real process
	}
	return "", "", fmt.Errorf("job %s did not finish in %s", job.ID, timeout)
}

// LiveAudio is a live session's stored recording (GET /v2/live/{id}/file
// with the bench key), as the daemon serves it (WAV).
func (d *Daemon) LiveAudio(id string) ([]byte, error) {
	req, err := http.NewRequest("GET", d.Base+"/v2/live/"+id+"/file", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("x-service-key", d.Key)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /v2/live/%s/file: %d %v", id, resp.StatusCode, err)
	}
	return b, nil
}
