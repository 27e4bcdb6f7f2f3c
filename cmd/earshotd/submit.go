package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// uploadRate is the slowest upload submit waits for (bytes per second),
// beside callTimeout: a 100 MB file may take about 7 minutes.
const uploadRate = 256 << 10

// cmdSubmit runs a pre-recorded job on a daemon: it uploads FILE (POST
// /v2/upload), creates the job with the options of --request (POST
// /v2/pre-recorded), waits for it to end and prints its result. A
// refused request or a failed job is an error with the contract's
// message.
func cmdSubmit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("submit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cf clientFlags
	cf.register(fs)
	reqPath := fs.String("request", "", "JSON `file` with the job's options (a /v2/pre-recorded body without audio_url; - for stdin)")
	wait := fs.Duration("timeout", 30*time.Minute, "how long to wait for the job to end")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("submit: exactly one FILE is required")
	}
	path := fs.Arg(0)
	req, err := readRequest(*reqPath)
	if err != nil {
		return fmt.Errorf("submit: %w", err)
	}
	if _, ok := req["audio_url"]; ok {
		return errors.New("submit: --request must not carry audio_url: the audio is FILE")
	}
	cl, err := cf.client()
	if err != nil {
		return fmt.Errorf("submit: %w", err)
	}
	audioURL, err := cl.upload(ctx, path)
	if err != nil {
		return fmt.Errorf("submit: %w", err)
	}
	body := make(map[string]any, len(req)+1)
	for k, v := range req {
		body[k] = v
	}
	body["audio_url"] = audioURL
	var created struct {
		ID        string `json:"id"`
		ResultURL string `json:"result_url"`
	}
	if err := cl.postJSON(ctx, "/v2/pre-recorded", body, &created); err != nil {
		return fmt.Errorf("submit: %w", err)
	}
	if !cf.json {
		fmt.Fprintf(stderr, "submit: job %s queued; waiting for it (at most %s)\n", created.ID, *wait)
	}
	rec, done, err := cl.waitRecord(ctx, "/v2/pre-recorded/"+created.ID, *wait, jobRecord.ended)
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("submit: interrupted; job %s goes on, its record: %s", created.ID, created.ResultURL)
	}
	if err != nil {
		return fmt.Errorf("submit: job %s: %w", created.ID, err)
	}
	if !done {
		return fmt.Errorf("submit: job %s still %s after %s; its record: %s", created.ID, rec.Status, *wait, created.ResultURL)
	}
	if err := rec.failure(); err != nil {
		return fmt.Errorf("submit: %w", err)
	}
	if !cf.json && rec.Result != nil {
		utts := rec.Result.Transcription.Utterances
		channels := 1
		for _, u := range utts {
			channels = max(channels, u.Channel+1)
		}
		for _, u := range utts {
			fmt.Fprintln(stdout, u.line(channels))
		}
	}
	return printRecord(stdout, cf.json, rec, created.ResultURL)
}

// upload sends the file at path to POST /v2/upload as the multipart field
// "audio", streaming it from disk, and returns its audio_url.
func (c *apiClient) upload(ctx context.Context, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	// The part's header and the closing boundary around the file's bytes,
	// so the body's length is known and the file is never held in memory.
	var head bytes.Buffer
	mw := multipart.NewWriter(&head)
	if _, err := mw.CreateFormFile("audio", filepath.Base(path)); err != nil {
		return "", err
	}
	n := head.Len()
	if err := mw.Close(); err != nil {
		return "", err
	}
	tail := bytes.Clone(head.Bytes()[n:])
	head.Truncate(n)
	body := &payload{
		r:     io.MultiReader(&head, io.LimitReader(f, st.Size()), bytes.NewReader(tail)),
		n:     int64(n) + st.Size() + int64(len(tail)),
		ctype: mw.FormDataContentType(),
	}
	var up struct {
		AudioURL string `json:"audio_url"`
	}
	timeout := callTimeout + time.Duration(st.Size()/uploadRate)*time.Second
	if err := c.call(ctx, timeout, http.MethodPost, "/v2/upload", body, &up); err != nil {
		return "", err
	}
	return up.AudioURL, nil
}
