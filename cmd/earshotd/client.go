package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// What the API clients (stream, submit) share: where the daemon is, the
// key, and HTTP calls that turn the contract's error body into an error.
const (
	// defaultURL is where make run starts the daemon.
	defaultURL = "http://127.0.0.1:8080"
	// firstKeyFile is the key make run creates, relative to the checkout.
	firstKeyFile = ".data/first-key"
	// envURL and envKey name the daemon and the key when the flags do not
	// (config.notConfigEnv keeps run from reading them as config keys).
	envURL = "EARSHOT_URL"
	envKey = "EARSHOT_KEY"
	// callTimeout bounds one API call that is not an upload.
	callTimeout = time.Minute
	// maxAnswer bounds an answer body the clients read (a job's record).
	maxAnswer = 64 << 20
)

// clientFlags are the flags every API client takes.
type clientFlags struct {
	url  string
	key  string
	json bool
}

func (c *clientFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.url, "url", "", "the daemon's `URL` (default $"+envURL+", else "+defaultURL+")")
	fs.StringVar(&c.key, "key", "", "API `KEY` (default $"+envKey+", else the file "+firstKeyFile+")")
	fs.BoolVar(&c.json, "json", false, "machine output: JSON only on stdout")
}

// client resolves the flags, the environment and the key file into a
// client: --key, else $EARSHOT_KEY, else .data/first-key of the working
// directory (make run writes it in the checkout).
func (c *clientFlags) client() (*apiClient, error) {
	base := cmp.Or(c.url, os.Getenv(envURL), defaultURL)
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--url %q: want http://HOST:PORT or https://HOST:PORT", base)
	}
	key := cmp.Or(c.key, os.Getenv(envKey))
	if key == "" {
		b, err := os.ReadFile(firstKeyFile)
		if err != nil {
			return nil, fmt.Errorf("no API key: give --key or set %s (or run in the checkout, where make run keeps one in %s): %w", envKey, firstKeyFile, err)
		}
		key = strings.TrimSpace(string(b))
	}
	if key == "" {
		return nil, fmt.Errorf("no API key: %s is empty", firstKeyFile)
	}
	return &apiClient{base: strings.TrimRight(u.String(), "/"), key: key, http: &http.Client{}}, nil
}

// apiClient calls one daemon's API with one key.
type apiClient struct {
	base string // scheme://host[:port][/prefix], no trailing slash
	key  string
	http *http.Client
}

// apiError is an error answer of the API, read from the contract's error
// body (SPEC.md §7): the status, its message and the validation errors.
type apiError struct {
	Method, Path     string
	Status           int
	Message          string
	ValidationErrors []string
}

func (e *apiError) Error() string {
	msg := fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.Status, e.Message)
	if len(e.ValidationErrors) > 0 {
		msg += ": " + strings.Join(e.ValidationErrors, "; ")
	}
	return msg
}

// payload is a request body: its bytes, their length and content type.
type payload struct {
	r     io.Reader
	n     int64
	ctype string
}

// call sends one request (body nil: none) and decodes a 2xx answer into
// out (when not nil); any other status is an *apiError. The call is
// bounded by timeout.
func (c *apiClient) call(ctx context.Context, timeout time.Duration, method, path string, body *payload, out any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var r io.Reader
	if body != nil {
		r = body.r
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("x-service-key", c.key)
	if body != nil {
		req.ContentLength = body.n
		req.Header.Set("content-type", body.ctype)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		e := &apiError{Method: method, Path: path, Status: resp.StatusCode}
		var eb struct {
			Message          string   `json:"message"`
			ValidationErrors []string `json:"validation_errors"`
		}
		if json.Unmarshal(b, &eb) == nil && eb.Message != "" {
			e.Message, e.ValidationErrors = eb.Message, eb.ValidationErrors
		} else {
			e.Message = http.StatusText(resp.StatusCode)
		}
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: answer is not the JSON expected: %w", method, path, err)
	}
	return nil
}

// postJSON is call with a JSON body.
func (c *apiClient) postJSON(ctx context.Context, path string, v, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.call(ctx, callTimeout, http.MethodPost, path, &payload{bytes.NewReader(b), int64(len(b)), "application/json"}, out)
}

// record reads a job's record (GET path) as raw JSON and its fields the
// clients look at.
func (c *apiClient) record(ctx context.Context, path string) (jobRecord, error) {
	var raw json.RawMessage
	if err := c.call(ctx, callTimeout, http.MethodGet, path, nil, &raw); err != nil {
		return jobRecord{}, err
	}
	rec := jobRecord{Raw: raw}
	if err := json.Unmarshal(raw, &rec); err != nil {
		return jobRecord{}, fmt.Errorf("GET %s: %w", path, err)
	}
	return rec, nil
}

// jobRecord is the part of a job's record (SPEC.md, GET
// /v2/pre-recorded/{id} and /v2/live/{id}) the clients read; Raw is all
// of it, as the API answered.
type jobRecord struct {
	Raw       json.RawMessage `json:"-"`
	ID        string          `json:"id"`
	Status    string          `json:"status"`
	ErrorCode *int            `json:"error_code"`
	Result    *struct {
		Transcription struct {
			FullTranscript string      `json:"full_transcript"`
			Utterances     []utterance `json:"utterances"`
		} `json:"transcription"`
	} `json:"result"`
	PostSessionMetadata struct {
		Error             string `json:"error"`
		TranscriptionPass string `json:"transcription_pass"`
		BatchPass         string `json:"batch_pass"`
	} `json:"post_session_metadata"`
}

// ended says whether the job is done or failed.
func (r jobRecord) ended() bool { return r.Status == "done" || r.Status == "error" }

// failure is the error of a failed job: its error_code and the message
// the daemon recorded.
func (r jobRecord) failure() error {
	if r.Status != "error" {
		return nil
	}
	code := 0
	if r.ErrorCode != nil {
		code = *r.ErrorCode
	}
	msg := cmp.Or(r.PostSessionMetadata.Error, http.StatusText(code))
	return fmt.Errorf("job %s failed: error_code %d: %s", r.ID, code, msg)
}

// utterance is a transcript's utterance, as the clients print it.
type utterance struct {
	Start   float64 `json:"start"`
	End     float64 `json:"end"`
	Channel int     `json:"channel"`
	Text    string  `json:"text"`
}

// line is the utterance as one line of human output: its times (and
// channel when the audio has several), then its text.
func (u utterance) line(channels int) string {
	return u.times(channels) + " " + u.Text
}

// times is "[start-end]", with the channel when the audio has several.
func (u utterance) times(channels int) string {
	if channels > 1 {
		return fmt.Sprintf("[%7.2f-%7.2f ch%d]", u.Start, u.End, u.Channel)
	}
	return fmt.Sprintf("[%7.2f-%7.2f]", u.Start, u.End)
}

// printRecord prints a finished job: its record as one JSON line (--json),
// or its transcript and where the record is.
func printRecord(w io.Writer, asJSON bool, rec jobRecord, recordURL string) error {
	if asJSON {
		var b bytes.Buffer
		if err := json.Compact(&b, rec.Raw); err != nil {
			return err
		}
		b.WriteByte('\n')
		_, err := w.Write(b.Bytes())
		return err
	}
	if rec.Result != nil {
		pass := ""
		if p := rec.PostSessionMetadata.TranscriptionPass; p != "" {
			pass = " (" + p + " pass)"
		}
		fmt.Fprintf(w, "transcript%s: %s\n", pass, rec.Result.Transcription.FullTranscript)
	}
	_, err := fmt.Fprintf(w, "record: %s\n", recordURL)
	return err
}

// waitRecord reads the record at path until done says it is what the
// caller waits for, polling at growing intervals (250 ms to 2 s), for at
// most wait: it returns the last record read and whether done said yes.
// An error reading it, or ctx ending, ends the wait with that error.
func (c *apiClient) waitRecord(ctx context.Context, path string, wait time.Duration, done func(jobRecord) bool) (jobRecord, bool, error) {
	deadline := time.Now().Add(wait)
	pause := 250 * time.Millisecond
	for {
		rec, err := c.record(ctx, path)
		if err != nil {
			return rec, false, err
		}
		if done(rec) {
			return rec, true, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return rec, false, nil
		}
		t := time.NewTimer(min(pause, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return rec, false, ctx.Err()
		case <-t.C:
		}
		pause = min(2*pause, 2*time.Second)
	}
}
