package transcript

import "math"

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

// Round3 rounds seconds to milliseconds, as the contract's times are.
func Round3(f float64) float64 { return math.Round(f*1000) / 1000 }

// TranslationResult is one target language's result in the translation
// envelope (SPEC 2.5).
type TranslationResult struct {
	Error          *AddonError `json:"error"`
	FullTranscript string      `json:"full_transcript"`
	Languages      []string    `json:"languages"`
	Utterances     []Utterance `json:"utterances"`
	Sentences      []*Envelope `json:"sentences"`
	Subtitles      []Subtitle  `json:"subtitles"`
}
