package live

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/transcript"
)

// TestBatchParams: the batch pass runs with the session's language, model,
// vocabulary, spelling and transcript-derived add-ons.
func TestBatchParams(t *testing.T) {
	voc := &params.VocabularyConfig{}
	sp := &params.SpellingConfig{}
	tc := &params.TranslationConfig{TargetLanguages: []string{"fr"}}
	lp := &params.Live{
		Model:          params.Model1,
		LanguageConfig: params.LanguageConfig{Languages: []string{"en"}},
		RealtimeProcessing: params.RealtimeProcessing{
			CustomVocabulary: true, CustomVocabularyConfig: voc, CustomSpelling: true, CustomSpellingConfig: sp,
			Translation: true, TranslationConfig: tc, NamedEntityRecognition: true, SentimentAnalysis: true,
		},
		PostProcessing: params.PostProcessing{Summarization: true, SummarizationConfig: params.SummarizationConfig{Type: "concise"}},
	}
	p := batchParams(lp)
	switch {
	case p.Model != params.Model1 || !slices.Equal(p.LanguageConfig.Languages, []string{"en"}):
		t.Errorf("model %q, languages %v", p.Model, p.LanguageConfig.Languages)
	case p.CustomVocabulary == nil || !*p.CustomVocabulary || p.CustomVocabularyConfig != voc:
		t.Errorf("custom vocabulary not carried over")
	case !p.CustomSpelling || p.CustomSpellingConfig != sp || !p.Translation || p.TranslationConfig != tc:
		t.Errorf("spelling or translation not carried over")
	case !p.NamedEntityRecognition || !p.SentimentAnalysis:
		t.Errorf("NER or sentiment not carried over")
	case !p.Summarization || p.SummarizationConfig == nil || p.SummarizationConfig.Type != "concise":
		t.Errorf("summarization %v %+v", p.Summarization, p.SummarizationConfig)
	}
	pc := &params.PIIRedactionConfig{EntityTypes: []string{"PCI"}, Audio: params.AudioTone}
	if q := batchParams(&params.Live{PIIRedaction: true, PIIRedactionConfig: pc}); !q.PIIRedaction || q.PIIRedactionConfig != pc {
		t.Errorf("pii_redaction not carried over: %v %+v", q.PIIRedaction, q.PIIRedactionConfig)
	}
	if q := batchParams(&params.Live{}); q.CustomVocabulary != nil || q.Translation || q.Summarization || q.SentimentAnalysis || q.PIIRedaction {
		t.Errorf("options the session did not ask for: %+v", q)
	}
}

// TestFillBatchPass: a finished pass replaces the result but keeps the
// session's messages; a failed one keeps the live result and says why;
// both queue the callback's held final messages once, in order, from the
// stored result; a job no longer waiting for a pass is left alone.
func TestFillBatchPass(t *testing.T) {
	lp, err := params.DecodeLiveOptions(map[string]any{"callback": true, "callback_config": map[string]any{"url": "http://127.0.0.1:1/hook",
		"receive_lifecycle_events": true, "receive_post_processing_events": true}})
	if err != nil {
		t.Fatal(err)
	}
	pb, _ := json.Marshal(lp)
	live := &pipeline.Result{Transcription: transcript.Transcription{FullTranscript: "live words", Utterances: []transcript.Utterance{}}, Messages: []string{`{"type":"end_session"}`}}
	lb, _ := json.Marshal(live)
	job := func() *store.Job {
		return &store.Job{ID: "j", Account: "a", Kind: store.KindLive, Status: store.StatusDone, Params: pb, Result: lb,
			BatchPass: store.BatchPassRunning, PostSessionMetadata: map[string]any{"transcription_pass": "live", "batch_pass": "pending"}}
	}
	events := func(ds []*store.Delivery) (types []string, final string) {
		for _, d := range ds {
			var cb struct {
				Event   string
				Payload struct {
					Data struct{ Transcription transcript.Transcription }
				}
			}
			if err := json.Unmarshal(d.Body, &cb); err != nil {
				t.Fatal(err)
			}
			types = append(types, cb.Event)
			if cb.Event == "live.post_final_transcript" {
				final = cb.Payload.Data.Transcription.FullTranscript
			}
		}
		return types, final
	}
	want := []string{"live.post_transcript", "live.post_final_transcript", "live.end_session"}

	j := job()
	res := &pipeline.Result{Transcription: transcript.Transcription{FullTranscript: "batch words", Utterances: []transcript.Utterance{}}, PostSessionMetadata: map[string]any{"engine": "sphinx"}}
	ds, err := fillBatchPass(j, res, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got pipeline.Result
	json.Unmarshal(j.Result, &got)
	md := j.PostSessionMetadata
	if got.Transcription.FullTranscript != "batch words" || !slices.Equal(got.Messages, live.Messages) || j.BatchPass != "" ||
		md["transcription_pass"] != "batch" || md["batch_pass"] != "done" || md["engine"] != "sphinx" {
		t.Errorf("done: result %+v, batch_pass %q, metadata %v", got, j.BatchPass, md)
	}
	if types, final := events(ds); !slices.Equal(types, want) || final != "batch words" {
		t.Errorf("done: callbacks %v with %q, want %v with the batch result", types, final, want)
	}

	j = job()
	ds, err = fillBatchPass(j, nil, errors.New("bad recording"), 0)
	if err != nil {
		t.Fatal(err)
	}
	md = j.PostSessionMetadata
	if string(j.Result) != string(lb) || md["transcription_pass"] != "live" || md["batch_pass"] != "failed" || md["batch_pass_error"] == "" {
		t.Errorf("failed: result %s, metadata %v", j.Result, md)
	}
	if types, final := events(ds); !slices.Equal(types, want) || final != "live words" {
		t.Errorf("failed: callbacks %v with %q, want %v with the live result", types, final, want)
	}

	j = job()
	j.BatchPass = ""
	if _, err := fillBatchPass(j, res, nil, 0); !errors.Is(err, errNoBatchPass) {
		t.Errorf("a job without a running pass: %v, want errNoBatchPass", err)
	}
}

// TestCombinable: the record takes live finals only when nothing of the
// batch pass's result derives from its own words.
func TestCombinable(t *testing.T) {
	on := true
	if !combinable(batchParams(&params.Live{})) {
		t.Error("a plain session's record is not combinable")
	}
	for name, p := range map[string]*params.PreRecorded{
		"translation": {Translation: true}, "ner": {NamedEntityRecognition: true}, "sentiment": {SentimentAnalysis: true},
		"summarization": {Summarization: true}, "spelling": {CustomSpelling: true}, "vocabulary": {CustomVocabulary: &on},
		"pii": {PIIRedaction: true}, "sentences": {Sentences: true}, "subtitles": {Subtitles: true},
		"diarization": {Diarization: true}, "punctuation": {PunctuationEnhanced: true}, "llm": {AudioToLLM: true},
	} {
		if combinable(p) {
			t.Errorf("%s: combinable", name)
		}
	}
}
