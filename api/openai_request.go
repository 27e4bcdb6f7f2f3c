package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"slices"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/store"
)

// oaiTask is what a /v1/audio request asks for.
type oaiTask string

const (
	taskTranscribe oaiTask = "transcribe" // /v1/audio/transcriptions
	taskTranslate  oaiTask = "translate"  // /v1/audio/translations: into English
)

// Bounds of a /v1/audio multipart body besides the file (which has the
// upload's, limits.max_upload_bytes): at most maxOpenAIParts parts, each
// other field at most params.MaxPromptLength bytes.
const (
	maxOpenAIParts      = 32
	maxOpenAIFieldBytes = params.MaxPromptLength
)

// OpenAI's response formats.
const (
	formatJSON        = "json"
	formatText        = "text"
	formatSRT         = "srt"
	formatVTT         = "vtt"
	formatVerboseJSON = "verbose_json"
)

var openAIFormats = []string{formatJSON, formatText, formatSRT, formatVTT, formatVerboseJSON}

// openAIModels maps the model names a /v1 request may give to the /v2
// model it runs as (docs/PROTOCOL.md): OpenAI's transcription models are
// model-1, routed as any model-1 job (engines.routes.model-1, else the
// first remote engine, else the embedded one).
var openAIModels = []struct{ name, model string }{
	{"whisper-1", params.Model1},
	{"gpt-4o-transcribe", params.Model1},
	{"gpt-4o-mini-transcribe", params.Model1},
	{params.Model1, params.Model1},
	{params.Model3, params.Model3},
}

// v2Model is the /v2 model of a /v1 model name; ok false for another name.
func v2Model(name string) (string, bool) {
	for _, m := range openAIModels {
		if m.name == name {
			return m.model, true
		}
	}
	return "", false
}

// oaiRequest is a /v1/audio request, checked.
type oaiRequest struct {
	task        oaiTask
	model       string // as given (a name of openAIModels)
	language    string // "" detects (as /v2 does without languages)
	prompt      string
	format      string
	temperature float64
	words       bool // timestamp_granularities has word
	segments    bool // timestamp_granularities has segment, or is not given
	stream      bool
}

// readOpenAIRequest reads a /v1/audio multipart body: the file part goes
// to the service as an upload (streamed to disk, never whole in memory,
// under the upload's size, quota and audio checks), the other fields are
// read within their bounds and checked. On error nothing is kept: an
// upload already made is deleted.
func (s *Server) readOpenAIRequest(ctx *fasthttp.RequestCtx, task oaiTask) (*oaiRequest, *store.Upload, error) {
	if n := ctx.Request.Header.ContentLength(); n > int(s.cfg.MaxUploadBytes)+64<<10 {
		return nil, nil, &fieldError{Kind: errcode.ErrTooLarge, Param: "file", Code: "file_too_large",
			Msg: fmt.Sprintf("file: request of %d bytes > limit %d", n, s.cfg.MaxUploadBytes)}
	}
	mt, mp, err := mime.ParseMediaType(string(ctx.Request.Header.ContentType()))
	if err != nil || mt != "multipart/form-data" || mp["boundary"] == "" {
		return nil, nil, badField("", "invalid_request", "body: Content-Type must be multipart/form-data with a boundary")
	}
	body := s.newClientBody(ctx)
	mr := multipart.NewReader(body, mp["boundary"])
	fields := map[string]string{}
	var grains []string
	var up *store.Upload
	fail := func(err error) (*oaiRequest, *store.Upload, error) {
		if up != nil {
			s.discardUpload(ctx, up.ID)
		}
		return nil, nil, err
	}
	for n := 0; ; n++ {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail(body.blame(badField("", "invalid_request", "body: malformed multipart body")))
		}
		if n == maxOpenAIParts {
			part.Close()
			return fail(badField("", "invalid_request", fmt.Sprintf("body: more than %d multipart fields", maxOpenAIParts)))
		}
		name := part.FormName()
		if name == "file" {
			if up != nil {
				part.Close()
				return fail(badField("file", "invalid_value", "file: given more than once"))
			}
			if fn := part.FileName(); len(fn) > store.MaxFilenameBytes {
				part.Close()
				return fail(badField("file", "invalid_value", fmt.Sprintf("file: filename must be at most %d bytes, not %d", store.MaxFilenameBytes, len(fn))))
			}
			up, err = s.svc.Upload(ctx, account(ctx), part.FileName(), part)
			part.Close()
			if err != nil {
				return fail(body.blame(err))
			}
			continue
		}
		v, err := io.ReadAll(io.LimitReader(part, maxOpenAIFieldBytes+1))
		part.Close()
		switch {
		case err != nil:
			return fail(body.blame(badField(truncateName(name), "invalid_request", "body: malformed multipart body")))
		case len(v) > maxOpenAIFieldBytes:
			return fail(badField(truncateName(name), "invalid_value", fmt.Sprintf("%q: must be at most %d bytes", truncateName(name), maxOpenAIFieldBytes)))
		}
		switch name {
		case "timestamp_granularities[]", "timestamp_granularities":
			grains = append(grains, string(v))
		default:
			fields[name] = string(v) // a repeated field: the last one, as form decoders do
		}
	}
	// What follows the closing boundary (an epilogue, a chunked body's
	// last chunk) is read, so the connection can carry the next request.
	io.CopyN(io.Discard, body, maxOpenAIFieldBytes)
	if up == nil {
		return fail(badField("file", "invalid_value", "file: is required (a multipart file field named \"file\")"))
	}
	req, err := checkOpenAIFields(task, fields, grains)
	if err != nil {
		return fail(err)
	}
	return req, up, nil
}

// discardUpload deletes the file of a refused /v1 request.
func (s *Server) discardUpload(ctx *fasthttp.RequestCtx, id string) {
	if err := s.svc.DeleteUpload(context.WithoutCancel(ctx), account(ctx), id); err != nil {
		s.log.Error("delete the file of a refused /v1 request", "file_id", id, "error", err)
	}
}

// truncateName keeps a client's field name short enough to quote.
func truncateName(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// checkOpenAIFields checks the fields of a /v1/audio request (unknown
// fields are ignored, as OpenAI's own newer fields would be).
func checkOpenAIFields(task oaiTask, f map[string]string, grains []string) (*oaiRequest, error) {
	r := &oaiRequest{task: task, format: formatJSON, segments: true}
	r.model = strings.TrimSpace(f["model"])
	if r.model == "" {
		return nil, badField("model", "invalid_value", "model: is required (whisper-1, or see GET /v1/models)")
	}
	if _, ok := v2Model(r.model); !ok {
		return nil, badField("model", "model_not_found", fmt.Sprintf("model: %q is not served here (see GET /v1/models)", truncateName(r.model)))
	}
	if l := strings.ToLower(strings.TrimSpace(f["language"])); l != "" {
		if !params.IsLanguage(l) {
			return nil, badField("language", "invalid_value", fmt.Sprintf("language: %q is not an ISO-639-1 language code", truncateName(l)))
		}
		r.language = l
	}
	r.prompt = f["prompt"]
	if v, ok := f["response_format"]; ok && v != "" {
		if !slices.Contains(openAIFormats, v) {
			return nil, badField("response_format", "invalid_value", fmt.Sprintf("response_format: must be one of %s, not %q", strings.Join(openAIFormats, ", "), truncateName(v)))
		}
		r.format = v
	}
	if v, ok := f["temperature"]; ok && v != "" {
		t, err := strconv.ParseFloat(v, 64)
		if err != nil || t < 0 || t > 1 {
			return nil, badField("temperature", "invalid_value", "temperature: must be a number from 0 to 1")
		}
		r.temperature = t
	}
	if len(grains) > 0 {
		r.segments = false
	}
	for _, g := range grains {
		switch g {
		case "word":
			r.words = true
		case "segment":
			r.segments = true
		default:
			return nil, badField("timestamp_granularities[]", "invalid_value", fmt.Sprintf("timestamp_granularities[]: must be word or segment, not %q", truncateName(g)))
		}
	}
	if v, ok := f["stream"]; ok && v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, badField("stream", "invalid_value", "stream: must be true or false")
		}
		r.stream = b
	}
	return r, nil
}

// preRecordedBody is the POST /v2/pre-recorded body of the request, its
// audio the uploaded file at audioURL: the same validation (params), the
// same routing, and for /v1 what /v2 has for it: the prompt as custom
// vocabulary (and a translation's context), srt and vtt as the subtitles
// add-on, a translation as the translation add-on into en.
func (r *oaiRequest) preRecordedBody(audioURL string) ([]byte, error) {
	model, _ := v2Model(r.model)
	b := map[string]any{
		"audio_url":       audioURL,
		"model":           model,
		"custom_metadata": map[string]any{"openai": "/v1/audio/" + map[oaiTask]string{taskTranscribe: "transcriptions", taskTranslate: "translations"}[r.task]},
	}
	if r.language != "" {
		b["language_config"] = map[string]any{"languages": []string{r.language}}
	}
	if vocab := promptVocabulary(r.prompt); len(vocab) > 0 {
		b["custom_vocabulary"] = true
		b["custom_vocabulary_config"] = map[string]any{"vocabulary": vocab}
	}
	if r.format == formatSRT || r.format == formatVTT {
		b["subtitles"] = true
		b["subtitles_config"] = map[string]any{"formats": []string{r.format}}
	}
	if r.task == taskTranslate {
		tc := map[string]any{"target_languages": []string{"en"}}
		if p := strings.TrimSpace(r.prompt); p != "" {
			tc["context"] = p
		}
		b["translation"] = true
		b["translation_config"] = tc
	}
	return json.Marshal(b)
}

// promptVocabulary is a prompt as custom vocabulary items: its phrases
// (split at commas, semicolons, sentence ends and line breaks, trimmed of
// quotes and spaces), a phrase over params.MaxWordLength bytes as its
// words, repeats and words longer than that left out, at most
// params.MaxVocabularyItems.
func promptVocabulary(prompt string) []string {
	var items []string
	add := func(s string) {
		s = strings.Trim(s, " \t\r\"'“”‘’()[]")
		if s != "" && len(s) <= params.MaxWordLength && !slices.Contains(items, s) && len(items) < params.MaxVocabularyItems {
			items = append(items, s)
		}
	}
	for _, phrase := range strings.FieldsFunc(prompt, func(r rune) bool { return strings.ContainsRune(",;.!?\n", r) }) {
		if len(phrase) <= params.MaxWordLength {
			add(phrase)
			continue
		}
		for _, w := range strings.Fields(phrase) {
			add(w)
		}
	}
	return items
}
