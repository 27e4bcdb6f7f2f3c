package pipeline

import (
	"fmt"
	"math"
	"slices"
	"strings"

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
	// PIIRedaction reports pii_redaction (not in SPEC 2.5, which has no
	// place for it): results list what was redacted, {entity_type, start,
	// end, channel}, without the text; types the appliance cannot detect
	// are named in its error.
	PIIRedaction *Envelope `json:"pii_redaction,omitempty"`
	// Messages are the live session's messages, as JSON strings (live only).
	Messages []string `json:"messages,omitempty"`

	// PostSessionMetadata is merged into the job's post_session_metadata
	// (notes such as an add-on that was not applied); not part of result.
	PostSessionMetadata map[string]any `json:"-"`
	// RedactedAudio is set when the job asked for pii_redaction with
	// pii_redaction_config.audio silence or tone: what its stored audio
	// must become (redactedaudio.go). Not part of result.
	RedactedAudio *RedactedAudio `json:"-"`
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
	// Sentences is one sentences envelope when sentences is enabled.
	Sentences []*Envelope `json:"sentences,omitempty"`
	// Subtitles has one file per format when subtitles is enabled.
	Subtitles []Subtitle `json:"subtitles,omitempty"`
}

// Subtitle is one subtitle file of the transcript (or of a translation).
type Subtitle struct {
	Format    string `json:"format"`
	Subtitles string `json:"subtitles"`
}

// Utterance is the contract's Utterance.
type Utterance struct {
	Start      float64 `json:"start"`
	End        float64 `json:"end"`
	Confidence float64 `json:"confidence"`
	Channel    int     `json:"channel"`
	// Speaker is set on every utterance when diarization is enabled.
	Speaker  *int   `json:"speaker,omitempty"`
	Words    []Word `json:"words"`
	Text     string `json:"text"`
	Language string `json:"language"`
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
	return &Envelope{IsEmpty: true, Error: addonError(errNotConfigured(name))}
}

func errNotConfigured(name string) error {
	return fmt.Errorf("%s needs a language-model backend and addons.llm is not configured on this appliance: %w", name, recognizer.ErrNotConfigured)
}

// buildResult shapes the recogniser's output without add-ons (the live
// session's result, and the base of a pre-recorded one; add-ons are run by
// Addons.apply, so p is not read here).
func buildResult(br *recognizer.BatchResult, duration float64, lang string) *Result {
	r := &Result{
		Metadata: ResultMetadata{
			AudioDuration:            Round3(duration),
			NumberOfDistinctChannels: max(br.DistinctChannels, 1),
		},
		Transcription: Transcription{Languages: []string{lang}},
	}
	r.Metadata.BillingTime = Round3(duration * float64(r.Metadata.NumberOfDistinctChannels))
	r.Transcription.Utterances, r.Transcription.FullTranscript = contractUtterances(br.Utterances, lang, nil)
	return r
}

// contractUtterances shapes utterances for the contract, with their
// speakers when speakers is not nil, and joins their text.
func contractUtterances(utts []recognizer.Utterance, lang string, speakers []int) ([]Utterance, string) {
	out := make([]Utterance, 0, len(utts))
	for i, u := range utts {
		ul := u.Language
		if ul == "" {
			ul = lang
		}
		cu := ContractUtterance(u, ul)
		if i < len(speakers) {
			sp := speakers[i]
			cu.Speaker = &sp
		}
		out = append(out, cu)
	}
	return out, joinText(utts)
}

// ContractUtterance shapes a recogniser utterance for the contract.
func ContractUtterance(u recognizer.Utterance, lang string) Utterance {
	cu := Utterance{Start: Round3(u.Start), End: Round3(u.End), Confidence: Round3(u.Confidence), Channel: u.Channel,
		Text: u.Text, Language: lang, Words: make([]Word, 0, len(u.Words))}
	for _, w := range u.Words {
		cu.Words = append(cu.Words, Word{Word: strings.TrimSpace(w.Word), Start: Round3(w.Start), End: Round3(w.End), Confidence: Round3(w.Confidence)})
	}
	return cu
}

// joinText is the full transcript: the utterances' texts joined by spaces.
func joinText(utts []recognizer.Utterance) string {
	texts := make([]string, 0, len(utts))
	for _, u := range utts {
		texts = append(texts, strings.TrimSpace(u.Text))
	}
	return strings.Join(slices.DeleteFunc(texts, func(s string) bool { return s == "" }), " ")
}

// Round3 rounds seconds to milliseconds, as the contract's times are.
func Round3(f float64) float64 { return math.Round(f*1000) / 1000 }
