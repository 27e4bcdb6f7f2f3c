package api

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/params"
)

// TestOpenAIError pins the /v1 door's mapping of earshot's errors to
// OpenAI's status, type, param and code (docs/PROTOCOL.md).
func TestOpenAIError(t *testing.T) {
	for _, c := range []struct {
		name        string
		err         error
		status      int
		typ         string
		param, code string
	}{
		{"field", badField("response_format", "invalid_value", "response_format: no"), 400, "invalid_request_error", "response_format", "invalid_value"},
		{"model", &fieldError{Kind: errcode.ErrNotFound, Param: "model", Code: "model_not_found", Msg: "m"}, 404, "invalid_request_error", "model", "model_not_found"},
		{"validation", &errcode.ValidationError{Problems: []string{"language_config.languages[0] bad"}}, 400, "invalid_request_error", "", ""},
		{"key", fmt.Errorf("key: %w", errcode.ErrUnauthorized), 401, "invalid_request_error", "", "invalid_api_key"},
		{"rate", fmt.Errorf("key k: %w", errcode.ErrRateLimited), 429, "requests", "", "rate_limit_exceeded"},
		{"too large", &errcode.Error{Kind: errcode.ErrTooLarge, Msg: "audio: upload exceeds 1 bytes"}, 413, "invalid_request_error", "file", "file_too_large"},
		{"not audio", &errcode.Error{Kind: errcode.ErrBadAudio, Msg: "audio: not audio"}, 400, "invalid_request_error", "file", "invalid_file_format"},
		{"cannot serve", fmt.Errorf("x: %w", params.ErrCannotServe), 400, "invalid_request_error", "", "invalid_value"},
		{"quota", &errcode.Error{Kind: errcode.ErrQuota, Msg: "quota"}, 507, "insufficient_quota", "", "insufficient_quota"},
		{"capacity", fmt.Errorf("queue: %w", errcode.ErrAtCapacity), 503, "server_error", "", ""},
		{"job failed", &jobFailure{status: 422, msg: "audio: not a readable audio file"}, 400, "invalid_request_error", "", ""},
		{"addon failed", &jobFailure{status: 501, msg: "translation: not configured"}, 501, "server_error", "", ""},
		{"internal", errors.New("disk on fire"), 500, "server_error", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, d := openAIError(c.err)
			param, code := "", ""
			if d.Param != nil {
				param = *d.Param
			}
			if d.Code != nil {
				code = *d.Code
			}
			if st != c.status || d.Type != c.typ || param != c.param || code != c.code || d.Message == "" {
				t.Errorf("%d %+v (param %q code %q), want %d %s %q %q", st, d, param, code, c.status, c.typ, c.param, c.code)
			}
			if st >= 500 && strings.Contains(d.Message, "disk on fire") {
				t.Errorf("a 5xx cause reached the client: %q", d.Message)
			}
		})
	}
}

// TestOpenAIWaitErrors: a wait past openai.timeout is 503 with the
// door's message, a server shutting down 503 too.
func TestOpenAIWaitErrors(t *testing.T) {
	for _, c := range []struct {
		err  error
		want error
	}{{context.DeadlineExceeded, errJobTimeout}, {context.Canceled, errcode.ErrShuttingDown}} {
		err := errors.Join(c.want, c.err)
		if st, d := openAIError(err); st != 503 || d.Type != "server_error" {
			t.Errorf("%v: %d %+v", c.err, st, d)
		}
	}
}

func TestCheckOpenAIFields(t *testing.T) {
	ok := map[string]string{"model": "whisper-1"}
	with := func(k, v string) map[string]string {
		m := map[string]string{"model": "whisper-1"}
		m[k] = v
		return m
	}
	r, err := checkOpenAIFields(taskTranscribe, ok, nil)
	if err != nil || r.format != formatJSON || !r.segments || r.words || r.stream || r.language != "" {
		t.Fatalf("defaults: %+v %v", r, err)
	}
	r, err = checkOpenAIFields(taskTranscribe, map[string]string{"model": "gpt-4o-transcribe", "language": "EN", "response_format": "verbose_json", "stream": "true", "temperature": "0.2"}, []string{"word"})
	if err != nil || r.language != "en" || r.format != formatVerboseJSON || !r.words || r.segments || !r.stream || r.temperature != 0.2 {
		t.Fatalf("fields: %+v %v", r, err)
	}
	for _, c := range []struct {
		fields map[string]string
		grains []string
		param  string
	}{
		{map[string]string{}, nil, "model"},
		{map[string]string{"model": "gpt-5"}, nil, "model"},
		{with("language", "xx"), nil, "language"},
		{with("response_format", "xml"), nil, "response_format"},
		{with("temperature", "2"), nil, "temperature"},
		{with("temperature", "warm"), nil, "temperature"},
		{with("stream", "maybe"), nil, "stream"},
		{ok, []string{"sentence"}, "timestamp_granularities[]"},
	} {
		_, err := checkOpenAIFields(taskTranscribe, c.fields, c.grains)
		var fe *fieldError
		if !errors.As(err, &fe) || fe.Param != c.param || errcode.Status(err) != 400 {
			t.Errorf("%v %v: %v, want a 400 naming %s", c.fields, c.grains, err, c.param)
		}
	}
}

func TestPromptVocabulary(t *testing.T) {
	got := promptVocabulary("Kubernetes, Prometheus; \"Grafana\".\nkubectl apply! Kubernetes")
	if want := []string{"Kubernetes", "Prometheus", "Grafana", "kubectl apply"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	long := strings.Repeat("word ", 60) // 300 bytes without a separator: its words
	if got := promptVocabulary(long); !slices.Equal(got, []string{"word"}) {
		t.Errorf("long phrase: %q", got)
	}
	if got := promptVocabulary(strings.Repeat("x", params.MaxWordLength+1)); len(got) != 0 {
		t.Errorf("a word over %d bytes kept: %q", params.MaxWordLength, got)
	}
	if got := promptVocabulary(""); got != nil {
		t.Errorf("empty prompt: %q", got)
	}
}

// FuzzOpenAIFields: any /v1 fields are either refused naming a field, or
// give a /v2 body params takes as well formed (never its 400: the
// prompt's vocabulary, the translation's context and the language within
// the contract's bounds); nothing panics.
func FuzzOpenAIFields(f *testing.F) {
	f.Add("whisper-1", "en", "json", "0", "false", "segment", "Kubernetes, Prometheus", true)
	f.Add("model-3", "FR", "verbose_json", "1", "true", "word", strings.Repeat("a ", 2048), false)
	f.Add("gpt-4o-transcribe", "", "srt", "", "", "", "\"\";;..!?\n", true)
	f.Add("whisper-1", "xx", "xml", "-1", "yes", "sentence", "", false)
	f.Fuzz(func(t *testing.T, model, lang, format, temp, stream, grain, prompt string, translate bool) {
		task := taskTranscribe
		if translate {
			task = taskTranslate
		}
		if len(prompt) > maxOpenAIFieldBytes {
			return // refused while the part is read
		}
		fields := map[string]string{"model": model, "language": lang, "response_format": format, "temperature": temp, "stream": stream, "prompt": prompt}
		var grains []string
		if grain != "" {
			grains = []string{grain}
		}
		r, err := checkOpenAIFields(task, fields, grains)
		if err != nil {
			var fe *fieldError
			if !errors.As(err, &fe) || fe.Param == "" || fe.Msg == "" {
				t.Fatalf("refusal without a field: %v", err)
			}
			return
		}
		body, err := r.preRecordedBody("http://earshot.invalid/v2/files/00000000-0000-4000-8000-000000000000")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := params.DecodePreRecorded(body, params.Capabilities{}); errcode.Status(err) == 400 {
			t.Fatalf("the /v2 body of accepted fields is malformed: %v\n%s", err, body)
		}
	})
}
