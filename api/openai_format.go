package api

import (
	"bytes"
	"compress/zlib"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/transcript"
)

// jobResult is the part of a job's stored result a /v1 answer reads.
type jobResult struct {
	Metadata      transcript.ResultMetadata `json:"metadata"`
	Transcription transcript.Transcription  `json:"transcription"`
	Translation   *struct {
		Error   *transcript.AddonError         `json:"error"`
		Results []transcript.TranslationResult `json:"results"`
	} `json:"translation"`
}

// jobFailure is a /v1 request's job that ended as error, or the add-on its
// answer needs (translation, subtitles) that failed: the status and the
// client message the job stored.
type jobFailure struct {
	status int
	msg    string
}

func (e *jobFailure) Error() string { return fmt.Sprintf("openai: job failed: %d %s", e.status, e.msg) }

// oaiTranscript is what a /v1 answer shows: the transcript, or for a
// translation its English text.
type oaiTranscript struct {
	text       string
	language   string // a code ("en")
	duration   float64
	utterances []transcript.Utterance
	subtitles  []transcript.Subtitle
}

// transcriptOf reads the answer of r from its ended job.
func transcriptOf(r *oaiRequest, job *store.Job) (*oaiTranscript, error) {
	if job.Status == store.StatusError {
		return nil, &jobFailure{status: job.ErrorCode, msg: job.ErrorMessage}
	}
	var res jobResult
	if err := json.Unmarshal(job.Result, &res); err != nil {
		return nil, fmt.Errorf("decode result of job %s: %w", job.ID, err)
	}
	t := &oaiTranscript{
		text: res.Transcription.FullTranscript, duration: res.Metadata.AudioDuration,
		utterances: res.Transcription.Utterances, subtitles: res.Transcription.Subtitles,
	}
	if len(res.Transcription.Languages) > 0 {
		t.language = res.Transcription.Languages[0]
	}
	if r.task == taskTranslate {
		tr := res.Translation
		switch {
		case tr == nil:
			return nil, fmt.Errorf("job %s has no translation", job.ID)
		case len(tr.Results) == 0 || tr.Results[0].Error != nil:
			e := tr.Error
			if len(tr.Results) > 0 && tr.Results[0].Error != nil {
				e = tr.Results[0].Error
			}
			if e == nil {
				return nil, fmt.Errorf("job %s: translation without results", job.ID)
			}
			return nil, &jobFailure{status: e.StatusCode, msg: "translation: " + e.Message}
		}
		en := tr.Results[0]
		t.text, t.language, t.utterances, t.subtitles = en.FullTranscript, "en", en.Utterances, en.Subtitles
	}
	return t, nil
}

// writeOpenAIResult writes t in r's response format, or as server-sent
// events when r.stream.
func (s *Server) writeOpenAIResult(ctx *fasthttp.RequestCtx, r *oaiRequest, t *oaiTranscript) {
	if r.stream {
		writeTranscriptEvents(ctx, r, t)
		return
	}
	switch r.format {
	case formatText:
		ctx.SetContentType("text/plain; charset=utf-8")
		ctx.SetBodyString(t.text + "\n")
	case formatSRT, formatVTT:
		for _, f := range t.subtitles {
			if f.Format == r.format {
				ctx.SetContentType("text/plain; charset=utf-8")
				ctx.SetBodyString(f.Subtitles)
				return
			}
		}
		s.failOpenAI(ctx, &jobFailure{status: 500, msg: "response_format " + r.format + ": the subtitles add-on built no file"})
	case formatVerboseJSON:
		s.writeJSON(ctx, fasthttp.StatusOK, verboseOf(r, t))
	default:
		s.writeJSON(ctx, fasthttp.StatusOK, oaiText{Text: t.text, Usage: usageOf(r, t)})
	}
}

// oaiText is the json response format.
type oaiText struct {
	Text  string    `json:"text"`
	Usage *oaiUsage `json:"usage,omitempty"`
}

// oaiUsage is a transcription's usage as OpenAI gives it for whisper-1:
// the audio's seconds, rounded up.
type oaiUsage struct {
	Type    string `json:"type"`
	Seconds int    `json:"seconds"`
}

// usageOf is a transcription's usage; nil for a translation (OpenAI's
// translations carry none).
func usageOf(r *oaiRequest, t *oaiTranscript) *oaiUsage {
	if r.task != taskTranscribe {
		return nil
	}
	return &oaiUsage{Type: "duration", Seconds: int(math.Ceil(t.duration))}
}

// oaiVerbose is the verbose_json response format.
type oaiVerbose struct {
	Task     string       `json:"task"`
	Language string       `json:"language"`
	Duration float64      `json:"duration"`
	Text     string       `json:"text"`
	Segments []oaiSegment `json:"segments,omitempty"`
	Words    []oaiWord    `json:"words,omitempty"`
	Usage    *oaiUsage    `json:"usage,omitempty"`
}

// oaiSegment is one utterance as a verbose_json segment. earshot has no
// tokens nor log-probabilities (docs/PROTOCOL.md): avg_logprob is the
// natural log of the utterance's confidence, compression_ratio is the
// text's length over its zlib-compressed length (Whisper's measure),
// no_speech_prob is 0 (a segment is speech the recogniser found), tokens
// is empty, seek is the start in 10 ms frames.
type oaiSegment struct {
	ID               int     `json:"id"`
	Seek             int     `json:"seek"`
	Start            float64 `json:"start"`
	End              float64 `json:"end"`
	Text             string  `json:"text"`
	Tokens           []int   `json:"tokens"`
	Temperature      float64 `json:"temperature"`
	AvgLogprob       float64 `json:"avg_logprob"`
	CompressionRatio float64 `json:"compression_ratio"`
	NoSpeechProb     float64 `json:"no_speech_prob"`
}

// oaiWord is one word of verbose_json's words.
type oaiWord struct {
	Word  string  `json:"word"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

// minConfidence floors a confidence before its log (avg_logprob).
const minConfidence = 1e-6

func verboseOf(r *oaiRequest, t *oaiTranscript) oaiVerbose {
	v := oaiVerbose{Task: string(r.task), Language: languageName(t.language), Duration: t.duration, Text: t.text, Usage: usageOf(r, t)}
	if r.segments {
		v.Segments = []oaiSegment{}
		for i, u := range t.utterances {
			v.Segments = append(v.Segments, oaiSegment{
				ID: i, Seek: int(math.Round(u.Start * 100)), Start: u.Start, End: u.End, Text: u.Text, Tokens: []int{},
				Temperature: r.temperature, AvgLogprob: transcript.Round3(math.Log(max(u.Confidence, minConfidence))),
				CompressionRatio: compressionRatio(u.Text),
			})
		}
	}
	if r.words {
		v.Words = []oaiWord{}
		for _, u := range t.utterances {
			for _, w := range u.Words {
				v.Words = append(v.Words, oaiWord{Word: w.Word, Start: w.Start, End: w.End})
			}
		}
	}
	return v
}

// compressionRatio is Whisper's: the text's bytes over their zlib size.
func compressionRatio(text string) float64 {
	if text == "" {
		return 0
	}
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	w.Write([]byte(text))
	w.Close()
	return transcript.Round3(float64(len(text)) / float64(b.Len()))
}

// oaiEvent is one server-sent event of a streamed transcription.
type oaiEvent struct {
	Type  string    `json:"type"`
	Delta string    `json:"delta,omitempty"`
	Text  *string   `json:"text,omitempty"`
	Usage *oaiUsage `json:"usage,omitempty"`
}

// writeTranscriptEvents answers with OpenAI's stream: one
// transcript.text.delta per utterance, then transcript.text.done with the
// whole text. The job has ended when they are written (docs/PROTOCOL.md).
func writeTranscriptEvents(ctx *fasthttp.RequestCtx, r *oaiRequest, t *oaiTranscript) {
	var b bytes.Buffer
	event := func(e oaiEvent) {
		j, _ := json.Marshal(e)
		b.WriteString("data: ")
		b.Write(j)
		b.WriteString("\n\n")
	}
	sep := ""
	for _, u := range t.utterances {
		if txt := strings.TrimSpace(u.Text); txt != "" {
			event(oaiEvent{Type: "transcript.text.delta", Delta: sep + txt})
			sep = " "
		}
	}
	event(oaiEvent{Type: "transcript.text.done", Text: &t.text, Usage: usageOf(r, t)})
	ctx.SetContentType("text/event-stream")
	ctx.Response.Header.Set("Cache-Control", "no-cache")
	ctx.SetBody(b.Bytes())
}
