package pipeline

import (
	"context"
	"slices"
	"testing"

	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
)

// namedEngine is an engine that only has a name: vocabularyWords reads
// nothing else of one without CheckVocabulary.
type namedEngine struct{}

func (namedEngine) Name() string        { return "stand-in" }
func (namedEngine) Languages() []string { return []string{"en"} }
func (namedEngine) NewStream(context.Context, recognizer.StreamOptions) (recognizer.Stream, error) {
	return nil, nil
}

// TestVocabularyIntensityMapping checks which intensity each item reaches
// the engine with: its own, else default_intensity, else
// DefaultVocabularyIntensity; items of another language are left out.
// e2e TestVocabularyIntensity shows the effect on real speech.
func TestVocabularyIntensityMapping(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		name string
		cfg  params.VocabularyConfig
		want []float64
	}{
		{"neither", params.VocabularyConfig{Vocabulary: []params.VocabularyItem{{Value: "a"}}}, []float64{DefaultVocabularyIntensity}},
		{"default_intensity", params.VocabularyConfig{Vocabulary: []params.VocabularyItem{{Value: "a"}}, DefaultIntensity: f(0.9)}, []float64{0.9}},
		{"default_intensity 0", params.VocabularyConfig{Vocabulary: []params.VocabularyItem{{Value: "a"}}, DefaultIntensity: f(0)}, []float64{0}},
		{"own wins", params.VocabularyConfig{Vocabulary: []params.VocabularyItem{{Value: "a", Intensity: f(0)}, {Value: "b"}}, DefaultIntensity: f(1)}, []float64{0, 1}},
		{"own without default", params.VocabularyConfig{Vocabulary: []params.VocabularyItem{{Value: "a", Intensity: f(0.2)}, {Value: "b"}}}, []float64{0.2, DefaultVocabularyIntensity}},
		{"other language left out", params.VocabularyConfig{Vocabulary: []params.VocabularyItem{{Value: "a", Language: "fr", Intensity: f(1)}, {Value: "b", Intensity: f(0.3)}}}, []float64{0.3}},
	} {
		words, _ := vocabularyWords(namedEngine{}, "en", &c.cfg)
		var got []float64
		for _, w := range words {
			got = append(got, w.Intensity)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: intensities %v, want %v", c.name, got, c.want)
		}
	}
}
