package remote

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
)

func TestToUtterance(t *testing.T) {
	w := func(word string, start, end, conf float64) recognizer.Word {
		return recognizer.Word{Word: word, Start: start, End: end, Confidence: conf}
	}
	tests := []struct {
		name     string
		body     string
		seconds  float64
		fallback string
		want     recognizer.Utterance
	}{
		{
			name: "openai: top-level words, segment logprob",
			body: `{"task":"transcribe","language":"english","duration":2.08,"text":" He could wait no longer.",
				"segments":[{"id":0,"start":0.0,"end":2.0,"text":" He could wait no longer.","avg_logprob":-0.25,"no_speech_prob":0.01}],
				"words":[{"word":" He","start":0.1,"end":0.3},{"word":" could","start":0.3,"end":0.6},{"word":" wait","start":0.6,"end":0.9},
				{"word":" no","start":0.9,"end":1.1},{"word":" longer.","start":1.1,"end":1.8}]}`,
			seconds: 2.08,
			want: recognizer.Utterance{Start: 0.1, End: 1.8, Confidence: math.Exp(-0.25), Language: "en", Text: "He could wait no longer.",
				Words: []recognizer.Word{w("He", 0.1, 0.3, math.Exp(-0.25)), w("could", 0.3, 0.6, math.Exp(-0.25)), w("wait", 0.6, 0.9, math.Exp(-0.25)),
					w("no", 0.9, 1.1, math.Exp(-0.25)), w("longer.", 1.1, 1.8, math.Exp(-0.25))}},
		},
		{
			name: "faster-whisper: word probabilities",
			body: `{"language":"en","text":"Go forward","segments":[{"start":0,"end":1,"text":"Go forward","avg_logprob":-0.1,"no_speech_prob":0.0,
				"words":[{"word":" Go","start":0.2,"end":0.4,"probability":0.5},{"word":" forward","start":0.4,"end":0.9,"probability":1.2}]}],
				"words":[{"word":" Go","start":0.2,"end":0.4,"probability":0.5},{"word":" forward","start":0.4,"end":0.9,"probability":1.2}]}`,
			seconds: 1,
			want: recognizer.Utterance{Start: 0.2, End: 0.9, Confidence: 0.75, Language: "en", Text: "Go forward",
				Words: []recognizer.Word{w("Go", 0.2, 0.4, 0.5), w("forward", 0.4, 0.9, 1)}},
		},
		{
			name: "whisper.cpp: words only inside segments",
			body: `{"task":"transcribe","language":"english","duration":3,"text":"Bonjour. Yes",
				"segments":[{"id":0,"start":0,"end":1,"text":" Bonjour.","avg_logprob":-0.5,"no_speech_prob":0.1,
				"words":[{"word":" Bonjour.","start":0.1,"end":0.8,"t_dtw":-1,"probability":0.25}]},
				{"id":1,"start":1,"end":3,"text":" Yes","avg_logprob":-0.2,"no_speech_prob":0.1,"words":[{"word":" Yes","start":1.5,"end":1.9}]}]}`,
			seconds: 3,
			want: recognizer.Utterance{Start: 0.1, End: 1.9, Confidence: (0.25 + math.Exp(-0.2)) / 2, Language: "en", Text: "Bonjour. Yes",
				Words: []recognizer.Word{w("Bonjour.", 0.1, 0.8, 0.25), w("Yes", 1.5, 1.9, math.Exp(-0.2))}},
		},
		{
			name:    "segments without words: spread by length",
			body:    `{"language":"fr","text":"ab abcd","segments":[{"start":1,"end":3,"text":" ab abcd","avg_logprob":0.3}]}`,
			seconds: 4,
			want: recognizer.Utterance{Start: 1, End: 1 + 2*7.0/8, Confidence: 1, Language: "fr", Text: "ab abcd",
				Words: []recognizer.Word{w("ab", 1, 1+2*2.0/8, 1), w("abcd", 1+2*3.0/8, 1+2*7.0/8, 1)}},
		},
		{
			name:     "text only: spread over the audio",
			body:     `{"text":"  one  two "}`,
			seconds:  2,
			fallback: "en",
			want: recognizer.Utterance{Start: 0, End: 1.75, Confidence: unknownConfidence, Language: "en", Text: "one two",
				Words: []recognizer.Word{w("one", 0, 0.75, unknownConfidence), w("two", 1, 1.75, unknownConfidence)}},
		},
		{
			name: "silent segment dropped (whisper's no-speech rule)",
			body: `{"language":"english","text":"Hi. Thank you.","segments":[
				{"start":0,"end":1,"text":" Hi.","avg_logprob":-0.2,"no_speech_prob":0.9},
				{"start":1,"end":2,"text":" Thank you.","avg_logprob":-1.5,"no_speech_prob":0.8}],
				"words":[{"word":"Hi.","start":0.2,"end":0.5},{"word":" Thank","start":1.2,"end":1.4},{"word":" you.","start":1.4,"end":1.6}]}`,
			seconds: 2,
			want: recognizer.Utterance{Start: 0.2, End: 0.5, Confidence: math.Exp(-0.2), Language: "en", Text: "Hi.",
				Words: []recognizer.Word{w("Hi.", 0.2, 0.5, math.Exp(-0.2))}},
		},
		{
			name:    "times clamped to the audio, blank words dropped",
			body:    `{"language":"en-US","text":"x y","words":[{"word":"x","start":-0.5,"end":0.2},{"word":"  ","start":0.2,"end":0.3},{"word":"y","start":0.9,"end":1.7,"probability":-1}]}`,
			seconds: 1,
			want: recognizer.Utterance{Start: 0, End: 1, Confidence: 0.5, Language: "en", Text: "x y",
				Words: []recognizer.Word{w("x", 0, 0.2, 1), w("y", 0.9, 1, 0)}},
		},
		{
			name:     "no speech: no words, unknown language falls back",
			body:     `{"language":"klingon","text":"","segments":[]}`,
			seconds:  5,
			fallback: "de",
			want:     recognizer.Utterance{Language: "de"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := parseResponse([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			got := toUtterance(r, tc.seconds, tc.fallback)
			if !utteranceEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func utteranceEqual(a, b recognizer.Utterance) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }
	if a.Text != b.Text || a.Language != b.Language || len(a.Words) != len(b.Words) ||
		!near(a.Start, b.Start) || !near(a.End, b.End) || !near(a.Confidence, b.Confidence) {
		return false
	}
	for i := range a.Words {
		x, y := a.Words[i], b.Words[i]
		if x.Word != y.Word || !near(x.Start, y.Start) || !near(x.End, y.End) || !near(x.Confidence, y.Confidence) {
			return false
		}
	}
	return true
}

func TestParseResponseRejects(t *testing.T) {
	for _, body := range []string{``, `null`, `[]`, `{"text": 3}`, `{"language":"en"}`, `{"text":"a"} {"text":"b"}`, `<html>502</html>`} {
		if _, err := parseResponse([]byte(body)); !errors.Is(err, ErrBadResponse) {
			t.Errorf("%q: %v", body, err)
		}
	}
}

// FuzzParseResponse: any body either is rejected with ErrBadResponse or
// maps to an utterance within the audio, with confidences in 0..1.
func FuzzParseResponse(f *testing.F) {
	f.Add([]byte(`{"language":"english","text":" a b","segments":[{"start":0,"end":1,"text":" a b","avg_logprob":-0.2,"no_speech_prob":0.7,"words":[{"word":" a","start":0,"end":0.5,"probability":0.9}]}],"words":[{"word":"b","start":0.5,"end":2}]}`), 1.5)
	f.Add([]byte(`{"text":"x y z"}`), 0.0)
	f.Add([]byte(`{"text":"","segments":[{"start":5,"end":1,"text":"w"}]}`), 3.0)
	f.Fuzz(func(t *testing.T, body []byte, seconds float64) {
		if math.IsNaN(seconds) || seconds < 0 || seconds > MaxAudio.Seconds() {
			return
		}
		r, err := parseResponse(body)
		if err != nil {
			if !errors.Is(err, ErrBadResponse) {
				t.Fatalf("error %v does not wrap ErrBadResponse", err)
			}
			return
		}
		u := toUtterance(r, seconds, "en")
		if len(u.Words) == 0 {
			if u.Text != "" {
				t.Fatalf("text %q without words", u.Text)
			}
			return
		}
		for i, w := range u.Words {
			if !(w.Start >= 0 && w.Start <= w.End && w.End <= seconds) || !(w.Confidence >= 0 && w.Confidence <= 1) ||
				w.Word == "" || w.Word != strings.TrimSpace(w.Word) {
				t.Fatalf("word %d: %+v (audio %.3f s)", i, w, seconds)
			}
		}
		if !(u.Confidence >= 0 && u.Confidence <= 1) || u.Start > u.End {
			t.Fatalf("utterance %+v", u)
		}
	})
}
