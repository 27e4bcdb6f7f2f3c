package remote

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/earshot-dev/earshot/recognizer"
)

// maxResponseBytes bounds the body read from the server (a verbose_json
// answer for MaxAudio of speech is well under 1 MiB).
const maxResponseBytes = 8 << 20

// Whisper's own thresholds (openai/whisper transcribe.py defaults
// no_speech_threshold=0.6, logprob_threshold=-1.0): a segment above the
// first and below the second is silence the decoder filled with text.
// Servers that already apply them send no such segment; those that do
// not (some whisper.cpp builds) do, and we drop it.
const (
	noSpeechThreshold = 0.6
	logprobThreshold  = -1.0
)

// unknownConfidence is given to words when the server reports neither a
// word probability nor a segment avg_logprob.
const unknownConfidence = 1.0

// verboseJSON is the response_format=verbose_json answer of
// /audio/transcriptions and /audio/translations: OpenAI's
// TranscriptionVerbose, which whisper.cpp's server, faster-whisper servers
// and vLLM copy. Unknown fields are ignored.
type verboseJSON struct {
	Text     *string   `json:"text"`     // required: its absence means another format
	Language string    `json:"language"` // "english" or "en"
	Duration float64   `json:"duration"` // seconds; informational
	Segments []segment `json:"segments"`
	Words    []word    `json:"words"` // with timestamp_granularities[]=word
}

type segment struct {
	Start        float64  `json:"start"`
	End          float64  `json:"end"`
	Text         string   `json:"text"`
	AvgLogprob   *float64 `json:"avg_logprob"`
	NoSpeechProb *float64 `json:"no_speech_prob"`
	Words        []word   `json:"words"` // faster-whisper and whisper.cpp put words here too
}

type word struct {
	Word        string   `json:"word"`
	Start       float64  `json:"start"`
	End         float64  `json:"end"`
	Probability *float64 `json:"probability"`
}

// parseResponse decodes a 2xx body. Anything but one verbose_json object
// wraps ErrBadResponse.
func parseResponse(body []byte) (*verboseJSON, error) {
	var r verboseJSON
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%w: decode verbose_json: %w", ErrBadResponse, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the json object", ErrBadResponse)
	}
	if r.Text == nil {
		return nil, fmt.Errorf("%w: no \"text\" field (not verbose_json)", ErrBadResponse)
	}
	return &r, nil
}

// silent reports whether Whisper's own rule marks s as no speech.
func (s segment) silent() bool {
	return s.NoSpeechProb != nil && s.AvgLogprob != nil &&
		*s.NoSpeechProb > noSpeechThreshold && *s.AvgLogprob < logprobThreshold
}

// confidence is exp(avg_logprob), or unknownConfidence without one.
func (s segment) confidence() float64 {
	if s.AvgLogprob == nil {
		return unknownConfidence
	}
	return math.Exp(*s.AvgLogprob)
}

// toUtterance maps a verbose_json answer for audioSeconds of audio into an
// utterance whose times are seconds from the audio's first sample.
//
// Words come from the first of: the top-level words; the segments' words;
// the segments' text spread over each segment by character count; the
// text spread over the whole audio. Words of segments Whisper's rule calls
// silent are dropped. A word's confidence is its probability, else
// exp(avg_logprob) of the segment holding its midpoint, clamped to 0..1.
// Word strings are trimmed of spaces only. Times are clamped to
// [0, audioSeconds] and End >= Start. Language is the server's detected
// language as a SPEC code, else fallback.
func toUtterance(r *verboseJSON, audioSeconds float64, fallback string) recognizer.Utterance {
	u := recognizer.Utterance{Language: languageCode(r.Language)}
	if u.Language == "" {
		u.Language = fallback
	}
	var words []recognizer.Word
	switch {
	case len(r.Words) > 0:
		for _, w := range r.Words {
			mid := (w.Start + w.End) / 2
			conf := unknownConfidence
			if s, ok := segmentAt(r.Segments, mid); ok {
				if s.silent() {
					continue
				}
				conf = s.confidence()
			}
			words = appendWord(words, w, conf)
		}
	case hasSegmentWords(r.Segments):
		for _, s := range r.Segments {
			if s.silent() {
				continue
			}
			for _, w := range s.Words {
				words = appendWord(words, w, s.confidence())
			}
		}
	case len(r.Segments) > 0:
		for _, s := range r.Segments {
			if !s.silent() {
				words = spread(words, s.Text, s.Start, s.End, s.confidence())
			}
		}
	default:
		words = spread(words, *r.Text, 0, audioSeconds, unknownConfidence)
	}
	if len(words) == 0 {
		return u
	}
	texts := make([]string, len(words))
	var sum float64
	for i := range words {
		w := &words[i]
		w.Start = clamp(w.Start, 0, audioSeconds)
		w.End = clamp(w.End, w.Start, audioSeconds)
		texts[i] = w.Word
		sum += w.Confidence
	}
	u.Words = words
	u.Text = strings.Join(texts, " ")
	u.Start = words[0].Start
	u.End = words[len(words)-1].End
	u.Confidence = sum / float64(len(words))
	return u
}

// appendWord appends w trimmed, unless it is blank. Its confidence is its
// probability when the server sent one, else conf.
func appendWord(dst []recognizer.Word, w word, conf float64) []recognizer.Word {
	text := strings.TrimSpace(w.Word)
	if text == "" {
		return dst
	}
	if w.Probability != nil {
		conf = *w.Probability
	}
	return append(dst, recognizer.Word{Word: text, Start: w.Start, End: w.End, Confidence: clamp(conf, 0, 1)})
}

// spread splits text at spaces and gives each word a share of [start, end]
// proportional to its length in runes plus one (for the gap).
func spread(dst []recognizer.Word, text string, start, end, conf float64) []recognizer.Word {
	fields := strings.Fields(text)
	if len(fields) == 0 {
		return dst
	}
	if end < start {
		end = start
	}
	total := 0
	for _, f := range fields {
		total += len([]rune(f)) + 1
	}
	span := end - start
	at := 0
	for _, f := range fields {
		n := len([]rune(f)) + 1
		ws := start + span*float64(at)/float64(total)
		we := start + span*float64(at+n-1)/float64(total) // gap after the word
		at += n
		dst = append(dst, recognizer.Word{Word: f, Start: ws, End: we, Confidence: clamp(conf, 0, 1)})
	}
	return dst
}

// segmentAt returns the segment whose [Start, End] holds t.
func segmentAt(segs []segment, t float64) (segment, bool) {
	for _, s := range segs {
		if t >= s.Start && t <= s.End {
			return s, true
		}
	}
	return segment{}, false
}

func hasSegmentWords(segs []segment) bool {
	for _, s := range segs {
		if len(s.Words) > 0 {
			return true
		}
	}
	return false
}

// clamp bounds v to [lo, hi]; NaN becomes lo.
func clamp(v, lo, hi float64) float64 {
	if !(v >= lo) {
		return lo
	}
	return min(v, hi)
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
