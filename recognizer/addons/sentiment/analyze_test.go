package sentiment

import (
	"encoding/json"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/addonstest"
)

func TestAnalyze(t *testing.T) {
	tests := []struct {
		text      string
		sentiment string
		emotion   string
	}{
		{"the service was good", Positive, NeutralEmotion},
		{"the service was not good", Negative, NeutralEmotion},
		{"i am really happy with the result", Positive, Joy},
		{"i am not happy with the result", Negative, NeutralEmotion},
		{"this is terrible", Negative, NeutralEmotion},
		{"that smell is disgusting", Negative, Disgust},
		{"it is not bad at all", Positive, NeutralEmotion},
		{"the food was great but the staff were rude", Mixed, Anger},
		{"i was worried but it turned out great", Positive, Joy},
		{"please send the invoice to the office", Neutral, NeutralEmotion},
		{"it looked like rain", Neutral, NeutralEmotion},
		{"i like it", Positive, NeutralEmotion},
		{"i am so angry about this", Negative, Anger},
		{"we were scared of the storm", Negative, Fear},
		{"wow i did not expect that", Positive, Surprise},
		{"she cried over the loss", Negative, Sadness},
		{"", Neutral, NeutralEmotion},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			r := Analyze([]recognizer.Utterance{{Text: tt.text, Start: 1, End: 2, Channel: 1}})
			if len(r) != 1 {
				t.Fatalf("%d results", len(r))
			}
			if r[0].Sentiment != tt.sentiment || r[0].Emotion != tt.emotion {
				t.Errorf("got %s/%s, want %s/%s", r[0].Sentiment, r[0].Emotion, tt.sentiment, tt.emotion)
			}
			if r[0].Text != tt.text || r[0].Start != 1 || r[0].End != 2 || r[0].Channel != 1 {
				t.Errorf("result %+v does not carry the utterance", r[0])
			}
		})
	}
}

// TestModifiers checks the rules move the score the right way.
func TestModifiers(t *testing.T) {
	tests := []struct {
		name             string
		weaker, stronger string
	}{
		{"booster", "the room was good", "the room was very good"},
		{"booster negative", "the room was bad", "the room was extremely bad"},
		{"dampener", "it was slightly annoying", "it was annoying"},
		{"degree adjective", "a sorrow", "a great sorrow"},
		{"contrast weighs the second clause", "it was good but slow", "it was slow but good"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, s := score(tt.weaker).compound(), score(tt.stronger).compound()
			if abs(s) <= abs(w) && tt.name != "contrast weighs the second clause" {
				t.Errorf("|%v| (%q) should exceed |%v| (%q)", s, tt.stronger, w, tt.weaker)
			}
			if tt.name == "contrast weighs the second clause" && !(w < 0 && s > 0) {
				t.Errorf("%q = %v should be negative, %q = %v positive", tt.weaker, w, tt.stronger, s)
			}
		})
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestRealTranscripts runs the analyser over reference transcripts of
// real read speech and over real recogniser output.
func TestRealTranscripts(t *testing.T) {
	tests := []struct {
		text      string
		sentiment string
		emotion   string
	}{
		// LibriSpeech 1995-1837-0001: sorrow and loss against hopes and
		// dreams; a lexicon cannot see that the hopes were lost.
		{"it was the first great sorrow of his life it was not so much the loss of the cotton itself but the fantasy the hopes the dreams built around it", Mixed, Joy},
		// LibriVox Sense and Sensibility 0880: a negated negative.
		{"he was not an ill disposed young man", Positive, NeutralEmotion},
		// 0890.
		{"unless to be rather cold hearted and rather selfish is to be ill disposed", Negative, NeutralEmotion},
		// 0920.
		{"had he married a more a amiable woman he might have been made still more respectable than he was", Positive, NeutralEmotion},
		// pocketsphinx goforward.
		{"go forward ten meters", Neutral, NeutralEmotion},
	}
	for _, tt := range tests {
		r := Analyze([]recognizer.Utterance{{Text: tt.text}})[0]
		if r.Sentiment != tt.sentiment || r.Emotion != tt.emotion {
			t.Errorf("%q: got %s/%s, want %s/%s", tt.text, r.Sentiment, r.Emotion, tt.sentiment, tt.emotion)
		}
	}
	// Recogniser output of the long read-prose clip: expository text,
	// mostly neutral; results line up with utterances and encode as JSON.
	tr := addonstest.Load(t, "ljspeech-LJ001-0007-to-0016-long.wav")
	res := Analyze(tr.Utterances)
	if len(res) != len(tr.Utterances) {
		t.Fatalf("%d results for %d utterances", len(res), len(tr.Utterances))
	}
	counts := map[string]int{}
	for i, r := range res {
		counts[r.Sentiment]++
		if r.Start != tr.Utterances[i].Start || r.Text != tr.Utterances[i].Text {
			t.Errorf("result %d does not match its utterance", i)
		}
		t.Logf("%s/%s %q", r.Sentiment, r.Emotion, r.Text)
	}
	if counts[Negative] > len(res)/2 {
		t.Errorf("expository prose judged negative in %d of %d utterances", counts[Negative], len(res))
	}
	if _, err := json.Marshal(res); err != nil {
		t.Fatal(err)
	}
}
