package sentiment

import (
	"math"
	"strings"
	"unicode"

	"github.com/earshot-dev/earshot/recognizer"
)

// Sentiment and emotion labels.
const (
	Positive = "positive"
	Negative = "negative"
	Neutral  = "neutral"
	Mixed    = "mixed"

	Joy      = "joy"
	Anger    = "anger"
	Sadness  = "sadness"
	Fear     = "fear"
	Surprise = "surprise"
	Disgust  = "disgust"
	// NeutralEmotion is the emotion of an utterance with no emotion words.
	NeutralEmotion = "neutral"
)

// Result is the sentiment of one utterance, the element of the contract's
// sentiment_analysis results list.
type Result struct {
	Sentiment, Emotion, Text string
	Start, End               float64
	Channel                  int
}

// Rule constants, VADER's where it has one.
const (
	negationWindow = 3     // words before a word that can negate it
	negationScale  = -0.74 // VADER's N_SCALAR
	beforeContrast = 0.5   // weight of words before "but"
	afterContrast  = 1.5   // weight of words after it
	alpha          = 15.0  // compound normalisation: x / sqrt(x² + alpha)
	neutralBand    = 0.05  // |compound| below this is neutral (VADER's threshold)
	mixedMin       = 1.0   // both sides need at least this much valence for mixed
	mixedRatio     = 0.4   // and the weaker side at least this fraction of the stronger
)

// Analyze returns one Result per utterance, in order (an utterance without
// words is neutral). Text, Start, End and Channel are the utterance's.
func Analyze(utts []recognizer.Utterance) []Result {
	out := make([]Result, len(utts))
	for i, u := range utts {
		s := score(u.Text)
		out[i] = Result{
			Sentiment: s.label(),
			Emotion:   s.emotion(),
			Text:      u.Text,
			Start:     u.Start,
			End:       u.End,
			Channel:   u.Channel,
		}
	}
	return out
}

// scores is what score found in one text.
type scores struct {
	pos, neg float64            // summed positive and (negative) negative valence
	emotions map[string]float64 // emotion -> weight
}

func (s scores) compound() float64 {
	x := s.pos + s.neg
	return x / math.Sqrt(x*x+alpha)
}

func (s scores) label() string {
	hi, lo := math.Max(s.pos, -s.neg), math.Min(s.pos, -s.neg)
	if lo >= mixedMin && lo >= mixedRatio*hi {
		return Mixed
	}
	switch c := s.compound(); {
	case c >= neutralBand:
		return Positive
	case c <= -neutralBand:
		return Negative
	}
	return Neutral
}

// emotion returns the strongest emotion consistent with the sentiment
// (joy is not reported for a negative utterance, nor anger, sadness, fear
// or disgust for a positive one).
func (s scores) emotion() string {
	lab := s.label()
	best, bestW := NeutralEmotion, 0.0
	for _, e := range []string{Joy, Anger, Sadness, Fear, Surprise, Disgust} {
		w := s.emotions[e]
		if w <= bestW {
			continue
		}
		if e == Joy && lab == Negative || e != Joy && e != Surprise && lab == Positive {
			continue
		}
		best, bestW = e, w
	}
	return best
}

// likeSubjects make "like" a verb ("i like it") rather than a preposition
// ("it looked like rain").
var likeSubjects = map[string]bool{
	"i": true, "we": true, "you": true, "they": true, "really": true, "would": true,
	"i'd": true, "we'd": true, "do": true, "don't": true, "didn't": true, "dont": true,
	"didnt": true, "not": true, "to": true, "also": true, "still": true, "just": true,
}

func words(text string) []string {
	f := strings.Fields(strings.ToLower(text))
	out := f[:0]
	for _, w := range f {
		w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' })
		w = strings.Trim(w, "'")
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

// score applies the lexicon and rules to one text.
func score(text string) scores {
	toks := words(text)
	vals := make([]float64, len(toks))
	s := scores{emotions: map[string]float64{}}
	negated := make([]bool, len(toks))
	for i, w := range toks {
		v, ok := valence[w]
		if !ok {
			continue
		}
		next := ""
		if i+1 < len(toks) {
			next = toks[i+1]
		}
		// Words that act as modifiers here carry no valence of their own.
		if _, deg := degreeAdjectives[w]; deg && valence[next] != 0 {
			continue
		}
		if w == "pretty" && valence[next] != 0 {
			continue
		}
		if (w == "like" || w == "likes" || w == "liked") && (i == 0 || !likeSubjects[toks[i-1]]) {
			continue
		}
		if w == "kind" && next == "of" {
			continue
		}
		sign := math.Copysign(1, v)
		// Boosters and dampeners up to three words back, decaying.
		for k := 1; k <= negationWindow && i-k >= 0; k++ {
			p := toks[i-k]
			decay := 1 - 0.05*float64(k-1)
			if b, ok := boosters[p]; ok {
				v += sign * b * decay
			}
			if b, ok := degreeAdjectives[p]; ok && k == 1 {
				v += sign * b
			}
			if p == "pretty" && k == 1 {
				v += sign * 0.15
			}
			if p == "of" && i-k-1 >= 0 && (toks[i-k-1] == "kind" || toks[i-k-1] == "sort") {
				v -= sign * 0.29
			}
		}
		for k := 1; k <= negationWindow && i-k >= 0; k++ {
			if negators[toks[i-k]] {
				v *= negationScale
				negated[i] = true
				break
			}
		}
		vals[i] = v
	}
	// Contrast: the last "but" splits the text.
	for i := len(toks) - 1; i >= 0; i-- {
		if contrast[toks[i]] {
			for k := range vals {
				if k < i {
					vals[k] *= beforeContrast
				} else {
					vals[k] *= afterContrast
				}
			}
			break
		}
	}
	for i, v := range vals {
		if v > 0 {
			s.pos += v
		} else {
			s.neg += v
		}
		if e, ok := emotionWords[toks[i]]; ok && !negated[i] {
			w := math.Abs(v)
			if w == 0 {
				if _, has := valence[toks[i]]; has {
					continue // a modifier here, or not counted
				}
				w = 1
			}
			s.emotions[e] += w
		}
	}
	return s
}
