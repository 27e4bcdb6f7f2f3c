package daemon

import (
	"encoding/json"
	"slices"

	"github.com/earshot-dev/earshot/recognizer"
)

// liveKept collects what the realtime add-ons found, utterance by
// utterance, so that the live result carries the same envelopes a
// pre-recorded job has (SPEC 2.5): named_entity_recognition with every
// entity, sentiment_analysis with the JSON list of every utterance's
// sentiment, translation with one result per target language. Entities
// and sentiment are added under the session's lock; translations by the
// worker, under liveAddons.mu.
type liveKept struct {
	entities   addonTally
	sentiments addonTally
	entityList []entityResult
	moodList   []sentimentResult

	translated []liveTranslated // guarded by liveAddons.mu
}

// addonTally sums one realtime add-on's per-utterance envelopes.
type addonTally struct {
	runs int
	exec float64
	err  *AddonError // the first error
}

func (t *addonTally) add(env *Envelope) {
	t.runs++
	t.exec += env.ExecTime
	if t.err == nil && env.Error != nil {
		t.err = env.Error
	}
}

// envelope is the tally as one envelope over results.
func (t *addonTally) envelope(results any, empty bool) *Envelope {
	return &Envelope{Success: t.err == nil, IsEmpty: empty, ExecTime: round3(t.exec), Error: t.err, Results: results}
}

// liveTranslated is one final utterance's translation into one target:
// out on success, err otherwise.
type liveTranslated struct {
	seq    int
	target string
	out    *recognizer.Utterance
	err    *AddonError
	exec   float64
}

// keepEntities adds one utterance's named_entity_recognition envelope.
func (k *liveKept) keepEntities(env *Envelope) {
	k.entities.add(env)
	if list, ok := env.Results.([]entityResult); ok {
		k.entityList = append(k.entityList, list...)
	}
}

// keepSentiment adds one utterance's sentiment_analysis envelope.
func (k *liveKept) keepSentiment(env *Envelope) {
	k.sentiments.add(env)
	if list, ok := env.Results.([]sentimentResult); ok {
		k.moodList = append(k.moodList, list...)
	}
}

// fill sets the result's envelopes of the realtime add-ons the session
// asked for (ner, sentiment, translation to targets); translated is the
// worker's output, taken once it has stopped.
func (k *liveKept) fill(res *Result, ner, sentiment bool, targets []string, translated []liveTranslated) {
	if ner {
		list := k.entityList
		if list == nil {
			list = []entityResult{}
		}
		res.NamedEntityRecognition = k.entities.envelope(list, len(list) == 0)
	}
	if sentiment {
		list := k.moodList
		if list == nil {
			list = []sentimentResult{}
		}
		b, _ := json.Marshal(list) // a list of plain structs always encodes
		res.SentimentAnalysis = k.sentiments.envelope(string(b), len(list) == 0)
	}
	if targets != nil {
		res.Translation = translationOf(targets, translated)
	}
}

// translationOf builds the translation envelope from the per-utterance
// translations: per target, the translated utterances in session order
// and the first error; the envelope fails only when every target failed,
// as for a pre-recorded job.
func translationOf(targets []string, done []liveTranslated) *Envelope {
	done = slices.Clone(done)
	slices.SortStableFunc(done, func(a, b liveTranslated) int { return a.seq - b.seq })
	var tally addonTally
	results := make([]TranslationResult, 0, len(targets))
	failed := 0
	for _, target := range targets {
		tr := TranslationResult{Languages: []string{target}, Utterances: []Utterance{}, Sentences: []*Envelope{}, Subtitles: []Subtitle{}}
		var utts []recognizer.Utterance
		for _, d := range done {
			if d.target != target {
				continue
			}
			tally.exec += d.exec
			if d.err != nil {
				tr.Error = cmpOr(tr.Error, d.err)
				continue
			}
			utts = append(utts, *d.out)
		}
		if tr.Error != nil {
			failed++
			tally.err = cmpOr(tally.err, tr.Error)
		}
		if len(utts) > 0 {
			tr.Utterances, tr.FullTranscript = contractUtterances(utts, target, nil)
		}
		results = append(results, tr)
	}
	env := tally.envelope(results, len(done) == 0)
	if failed < len(targets) {
		env.Success, env.Error = true, nil
	}
	return env
}

// cmpOr is a if set, else b.
func cmpOr(a, b *AddonError) *AddonError {
	if a != nil {
		return a
	}
	return b
}
