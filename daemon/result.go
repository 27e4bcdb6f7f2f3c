package daemon

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/earshot-dev/earshot/daemon/params"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/recognizer"
)

// Result is the contract's result object (SPEC 2.5) of a pre-recorded job.
type Result struct {
	Metadata               ResultMetadata `json:"metadata"`
	Transcription          Transcription  `json:"transcription"`
	Translation            *Envelope      `json:"translation,omitempty"`
	Summarization          *Envelope      `json:"summarization,omitempty"`
	NamedEntityRecognition *Envelope      `json:"named_entity_recognition,omitempty"`
	SentimentAnalysis      *Envelope      `json:"sentiment_analysis,omitempty"`
	AudioToLLM             *Envelope      `json:"audio_to_llm,omitempty"`
	Sentences              *Envelope      `json:"sentences,omitempty"`
	Diarization            *Envelope      `json:"diarization,omitempty"`
	Chapterization         *Envelope      `json:"chapterization,omitempty"`
	// Messages are the live session's messages, as JSON strings (live only).
	Messages []string `json:"messages,omitempty"`
}

// ResultMetadata is result.metadata; all four fields are required.
type ResultMetadata struct {
	AudioDuration            float64 `json:"audio_duration"`
	NumberOfDistinctChannels int     `json:"number_of_distinct_channels"`
	BillingTime              float64 `json:"billing_time"`
	TranscriptionTime        float64 `json:"transcription_time"`
}

// Transcription is result.transcription.
type Transcription struct {
	FullTranscript string      `json:"full_transcript"`
	Languages      []string    `json:"languages"`
	Utterances     []Utterance `json:"utterances"`
}

// Utterance is the contract's Utterance.
type Utterance struct {
	Start      float64 `json:"start"`
	End        float64 `json:"end"`
	Confidence float64 `json:"confidence"`
	Channel    int     `json:"channel"`
	Words      []Word  `json:"words"`
	Text       string  `json:"text"`
	Language   string  `json:"language"`
}

// Word is the contract's Word.
type Word struct {
	Word       string  `json:"word"`
	Start      float64 `json:"start"`
	End        float64 `json:"end"`
	Confidence float64 `json:"confidence"`
}

// Envelope is the add-on envelope; all five fields are always present.
type Envelope struct {
	Success  bool        `json:"success"`
	IsEmpty  bool        `json:"is_empty"`
	ExecTime float64     `json:"exec_time"`
	Error    *AddonError `json:"error"`
	Results  any         `json:"results"`
}

// AddonError is the contract's AddonError.
type AddonError struct {
	StatusCode int    `json:"status_code"`
	Exception  string `json:"exception"`
	Message    string `json:"message"`
}

// notConfigured is the envelope of an add-on that has no backend on this
// appliance (PROTOCOL.md: 501 NotConfigured); the job still succeeds.
func notConfigured(name string) *Envelope {
	return &Envelope{
		IsEmpty: true,
		Error: &AddonError{
			StatusCode: 501,
			Exception:  "NotConfigured",
			Message:    name + " is not configured on this appliance",
		},
	}
}

// Transcriber runs the pre-recorded pipeline on a file: decode, split
// channels, resample, segment, recognise, shape the result. The worker pool
// and `earshotd transcribe` share it.
type Transcriber struct {
	Engine recognizer.Engine
	Media  media.Options
}

// TranscribeFile runs the pipeline on path with the job's parameters.
// Unreadable audio wraps ErrBadAudio, audio over the duration limit wraps
// ErrTooLarge.
func (t *Transcriber) TranscribeFile(ctx context.Context, path string, p *params.PreRecorded) (*Result, *media.Info, error) {
	start := time.Now()
	pcm, err := media.Decode(ctx, path, &t.Media)
	switch {
	case errors.Is(err, media.ErrTooLong):
		return nil, nil, newError(ErrTooLarge, err, "audio: too long")
	case errors.Is(err, media.ErrUnsupported), errors.Is(err, media.ErrCorrupt):
		return nil, nil, newError(ErrBadAudio, err, "audio: unreadable")
	case err != nil:
		return nil, nil, fmt.Errorf("decode audio: %w", err)
	}
	lang := p.Language()
	if lang == "" {
		lang = t.Engine.Languages()[0]
	}
	br, err := recognizer.Transcribe(ctx, t.Engine, pcm.Channels, recognizer.BatchOptions{Language: lang})
	if err != nil {
		return nil, nil, fmt.Errorf("transcribe: %w", err)
	}
	res := buildResult(br, pcm.Info.Duration, lang, p)
	res.Metadata.TranscriptionTime = round3(time.Since(start).Seconds())
	return res, &pcm.Info, nil
}

func buildResult(br *recognizer.BatchResult, duration float64, lang string, p *params.PreRecorded) *Result {
	r := &Result{
		Metadata: ResultMetadata{
			AudioDuration:            round3(duration),
			NumberOfDistinctChannels: max(br.DistinctChannels, 1),
		},
		Transcription: Transcription{Languages: []string{lang}, Utterances: []Utterance{}},
	}
	r.Metadata.BillingTime = round3(duration * float64(r.Metadata.NumberOfDistinctChannels))
	texts := make([]string, 0, len(br.Utterances))
	for _, u := range br.Utterances {
		ul := u.Language
		if ul == "" {
			ul = lang
		}
		r.Transcription.Utterances = append(r.Transcription.Utterances, contractUtterance(u, ul))
		texts = append(texts, u.Text)
	}
	r.Transcription.FullTranscript = strings.Join(slices.DeleteFunc(texts, func(s string) bool { return s == "" }), " ")
	// Add-ons without a backend on this appliance report 501 in their
	// envelope (PROTOCOL.md); the transcript itself still succeeds.
	if p.Translation {
		r.Translation = notConfigured("translation")
	}
	if p.Summarization {
		r.Summarization = notConfigured("summarization")
	}
	if p.NamedEntityRecognition {
		r.NamedEntityRecognition = notConfigured("named_entity_recognition")
	}
	if p.SentimentAnalysis {
		r.SentimentAnalysis = notConfigured("sentiment_analysis")
	}
	if p.AudioToLLM {
		r.AudioToLLM = notConfigured("audio_to_llm")
	}
	if p.Sentences {
		r.Sentences = notConfigured("sentences")
	}
	if p.Diarization {
		r.Diarization = notConfigured("diarization")
	}
	return r
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }
