package pipeline

import (
	"context"
	"sync"
	"testing"

	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
)

// optionsEngine records the stream options of its streams, which hear
// nothing.
type optionsEngine struct {
	fakeEmbedded
	mu   sync.Mutex
	seen []recognizer.StreamOptions
}

func (e *optionsEngine) NewStream(_ context.Context, o recognizer.StreamOptions) (recognizer.Stream, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seen = append(e.seen, o)
	return silentStream{}, nil
}

type silentStream struct{}

func (silentStream) Write([]int16) error                    { return nil }
func (silentStream) Partial() (recognizer.Hypothesis, bool) { return recognizer.Hypothesis{}, false }
func (silentStream) Finish() (recognizer.Utterance, error)  { return recognizer.Utterance{}, nil }
func (silentStream) Close() error                           { return nil }

// TestTranscriberRecord: a Transcriber copy with Record (a live session's
// batch pass) asks the engine's streams for a record's search
// (StreamOptions.Record, issue 41); the Transcriber a pre-recorded job
// runs on does not.
func TestTranscriberRecord(t *testing.T) {
	en := &optionsEngine{}
	c := EnginesConfig{}
	c.SetDefaults()
	engines, err := NewEngines(en, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engines.Close() })
	tr := &Transcriber{Engines: engines}
	path := "../../../shared/testdata/speech/pocketsphinx-goforward.wav"
	for _, record := range []bool{false, true} {
		tc := *tr
		tc.Record = record
		en.seen = nil
		if _, _, err := tc.TranscribeFile(t.Context(), path, &params.PreRecorded{}); err != nil {
			t.Fatal(err)
		}
		if len(en.seen) == 0 {
			t.Fatalf("record %v: no stream was opened", record)
		}
		for _, o := range en.seen {
			if o.Record != record {
				t.Errorf("Transcriber.Record %v: a stream's options have Record %v", record, o.Record)
			}
		}
	}
}
