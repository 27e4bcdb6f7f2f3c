package pipeline

import (
	"encoding/json"
	"slices"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/transcript"
)

// LiveKept collects what the realtime add-ons found, utterance by
// utterance, so that the live result carries the same envelopes a
// pre-recorded job has (SPEC 2.5): named_entity_recognition with every
// entity, sentiment_analysis with the JSON list of every utterance's
// sentiment, translation with one result per target language. The session
// that owns it serialises every call.
type LiveKept struct {
	entities   addonTally
	sentiments addonTally
	entityList []EntityResult
	moodList   []SentimentResult

	// Translated are the per-utterance translations; the session's
	// translation worker appends to it under its own lock.
	Translated []LiveTranslated
}

// addonTally sums one realtime add-on's per-utterance envelopes.
type addonTally struct {
	runs int
	exec float64
	err  *transcript.AddonError // the first error
}

func (t *addonTally) add(env *transcript.Envelope) {
	t.runs++
	t.exec += env.ExecTime
	if t.err == nil && env.Error != nil {
		t.err = env.Error
	}
}

// envelope is the tally as one envelope over results.
func (t *addonTally) envelope(results any, empty bool) *transcript.Envelope {
	return &transcript.Envelope{Success: t.err == nil, IsEmpty: empty, ExecTime: transcript.Round3(t.exec), Error: t.err, Results: results}
}

// LiveTranslated is one final utterance's translation into one target:
// out on success, err otherwise.
type LiveTranslated struct {
	Seq    int                   // the utterance's order in the session
	Target string                // the target language
	Out    *recognizer.Utterance // the translation, nil on error
	Err    *transcript.AddonError
	Exec   float64 // seconds the translation took
}

// KeepEntities adds one utterance's named_entity_recognition envelope.
func (k *LiveKept) KeepEntities(env *transcript.Envelope) {
	k.entities.add(env)
	if list, ok := env.Results.([]EntityResult); ok {
		k.entityList = append(k.entityList, list...)
	}
}

// KeepSentiment adds one utterance's sentiment_analysis envelope.
func (k *LiveKept) KeepSentiment(env *transcript.Envelope) {
	k.sentiments.add(env)
	if list, ok := env.Results.([]SentimentResult); ok {
		k.moodList = append(k.moodList, list...)
	}
}

// Fill sets the result's envelopes of the realtime add-ons the session
// asked for (ner, sentiment, translation to targets); translated is the
// worker's output, taken once it has stopped.
func (k *LiveKept) Fill(res *Result, ner, sentiment bool, targets []string, translated []LiveTranslated) {
	if ner {
		list := k.entityList
		if list == nil {
			list = []EntityResult{}
		}
		res.NamedEntityRecognition = k.entities.envelope(list, len(list) == 0)
	}
	if sentiment {
		list := k.moodList
		if list == nil {
			list = []SentimentResult{}
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
func translationOf(targets []string, done []LiveTranslated) *transcript.Envelope {
	done = slices.Clone(done)
	slices.SortStableFunc(done, func(a, b LiveTranslated) int { return a.Seq - b.Seq })
	var tally addonTally
	results := make([]transcript.TranslationResult, 0, len(targets))
	failed := 0
	for _, target := range targets {
		tr := transcript.TranslationResult{Languages: []string{target}, Utterances: []transcript.Utterance{}, Sentences: []*transcript.Envelope{}, Subtitles: []transcript.Subtitle{}}
		var utts []recognizer.Utterance
		for _, d := range done {
			if d.Target != target {
				continue
			}
			tally.exec += d.Exec
			if d.Err != nil {
				tr.Error = cmpOr(tr.Error, d.Err)
				continue
			}
			utts = append(utts, *d.Out)
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
func cmpOr(a, b *transcript.AddonError) *transcript.AddonError {
	if a != nil {
		return a
	}
	return b
}
