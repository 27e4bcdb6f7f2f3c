package pipeline

import (
	"fmt"
	"slices"
	"strings"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/transcript"
)

// Result is the contract's result object (SPEC 2.5) of a pre-recorded job.
type Result struct {
	Metadata               transcript.ResultMetadata `json:"metadata"`
	Transcription          transcript.Transcription  `json:"transcription"`
	Translation            *transcript.Envelope      `json:"translation,omitempty"`
	Summarization          *transcript.Envelope      `json:"summarization,omitempty"`
	NamedEntityRecognition *transcript.Envelope      `json:"named_entity_recognition,omitempty"`
	SentimentAnalysis      *transcript.Envelope      `json:"sentiment_analysis,omitempty"`
	AudioToLLM             *transcript.Envelope      `json:"audio_to_llm,omitempty"`
	Sentences              *transcript.Envelope      `json:"sentences,omitempty"`
	Diarization            *transcript.Envelope      `json:"diarization,omitempty"`
	Chapterization         *transcript.Envelope      `json:"chapterization,omitempty"`
	// PIIRedaction reports pii_redaction (not in SPEC 2.5, which has no
	// place for it): results list what was redacted, {entity_type, start,
	// end, channel}, without the text; types the appliance cannot detect
	// are named in its error.
	PIIRedaction *transcript.Envelope `json:"pii_redaction,omitempty"`
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

// notConfigured is the envelope of an add-on that has no backend on this
// appliance (PROTOCOL.md: 501 NotConfigured); the job still succeeds.
func notConfigured(name string) *transcript.Envelope {
	return &transcript.Envelope{IsEmpty: true, Error: addonError(errNotConfigured(name))}
}

func errNotConfigured(name string) error {
	return fmt.Errorf("%s needs a language-model backend and addons.llm is not configured on this appliance: %w", name, recognizer.ErrNotConfigured)
}

// buildResult shapes the recogniser's output without add-ons (the live
// session's result, and the base of a pre-recorded one; add-ons are run by
// Addons.apply, so p is not read here).
func buildResult(br *recognizer.BatchResult, duration float64, lang string) *Result {
	r := &Result{
		Metadata: transcript.ResultMetadata{
			AudioDuration:            transcript.Round3(duration),
			NumberOfDistinctChannels: max(br.DistinctChannels, 1),
		},
		Transcription: transcript.Transcription{Languages: []string{lang}},
	}
	r.Metadata.BillingTime = transcript.Round3(duration * float64(r.Metadata.NumberOfDistinctChannels))
	r.Transcription.Utterances, r.Transcription.FullTranscript = contractUtterances(br.Utterances, lang, nil)
	return r
}

// contractUtterances shapes utterances for the contract, with their
// speakers when speakers is not nil, and joins their text.
func contractUtterances(utts []recognizer.Utterance, lang string, speakers []int) ([]transcript.Utterance, string) {
	out := make([]transcript.Utterance, 0, len(utts))
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
func ContractUtterance(u recognizer.Utterance, lang string) transcript.Utterance {
	cu := transcript.Utterance{Start: transcript.Round3(u.Start), End: transcript.Round3(u.End), Confidence: transcript.Round3(u.Confidence), Channel: u.Channel,
		Text: u.Text, Language: lang, Words: make([]transcript.Word, 0, len(u.Words))}
	for _, w := range u.Words {
		cu.Words = append(cu.Words, transcript.Word{Word: strings.TrimSpace(w.Word), Start: transcript.Round3(w.Start), End: transcript.Round3(w.End), Confidence: transcript.Round3(w.Confidence)})
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
