package live

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store/bolt"

	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/store"
)

// redactSession is a session asking for pii_redaction with no recogniser
// and no door: its events are handed to onEvent on the test's goroutine.
func redactSession(p *params.Live) *session {
	p.LanguageConfig.Languages = []string{"en"}
	p.MessagesConfig = params.WebSocketDefaults()
	p.MessagesConfig.ReceivePartialTranscripts = true
	return &session{
		id: "s", svc: &Service{deps: Deps{Recordings: blobFiles{}}}, log: slog.New(slog.DiscardHandler), p: p, format: pcm16,
		state: stateAttached, messages: newMessageLog(1 << 20), pii: newPIIStream(p),
	}
}

// utt is an utterance of words spread 0.3 s apart from start.
func utt(start float64, text string) recognizer.Utterance {
	u := recognizer.Utterance{Start: start, Text: text, Language: "en", Confidence: 0.9}
	for i, w := range strings.Fields(text) {
		u.Words = append(u.Words, recognizer.Word{Word: w, Start: start + 0.3*float64(i), End: start + 0.3*float64(i) + 0.25, Confidence: 0.9})
	}
	u.End = u.Words[len(u.Words)-1].End
	return u
}

// TestLiveRedaction: a card number read in two finals (each group alone
// unrecognisable), a partial of its second group and a name: no message
// the session sent (result.messages) holds a digit of the card or the
// name, the finals kept for the result are redacted, the first group is
// held back until the second shows the number goes on, and the entities
// found are what blankRecording blanks in a µ-law recording (digital
// silence there, the rest as it was). Without pii_redaction the same
// events go out as they came (the test's premise).
func TestLiveRedaction(t *testing.T) {
	events := []recognizer.Event{
		{Kind: recognizer.EventFinal, ID: 1, Utterance: utt(0, "my name is sarah miller")},
		{Kind: recognizer.EventFinal, ID: 2, Utterance: utt(2, "my card is four one one one one one one one")},
		{Kind: recognizer.EventPartial, ID: 3, Utterance: utt(5, "one one one one")},
		{Kind: recognizer.EventFinal, ID: 3, Utterance: utt(5, "one one one one one one one one")},
		{Kind: recognizer.EventFinal, ID: 4, Utterance: utt(9, "thank you")},
	}
	secrets := []string{"sarah", "miller", "four one one one", "one one one one"}
	run := func(p *params.Live) *session {
		s := redactSession(p)
		for i, e := range events {
			s.onEvent(e)
			if i == 1 && p.PIIRedaction && len(s.finals) != 1 {
				t.Errorf("the card's first group went out before the next final: %d finals", len(s.finals))
			}
		}
		s.releaseHeld()
		return s
	}

	plain := run(&params.Live{})
	if all := strings.Join(plain.messages.messages(), "\n"); !strings.Contains(all, "sarah") || !strings.Contains(all, "four one one one") {
		t.Fatalf("without pii_redaction the messages do not hold the call: %s", all)
	}

	s := run(&params.Live{PIIRedaction: true, PIIRedactionConfig: &params.PIIRedactionConfig{EntityTypes: []string{"GDPR", "PCI"}}})
	msgs := s.messages.messages()
	all := strings.Join(msgs, "\n")
	for _, sec := range secrets {
		if strings.Contains(all, sec) {
			t.Errorf("%q in the messages sent: %s", sec, all)
		}
	}
	if !strings.Contains(all, "[CREDIT_CARD]") || !strings.Contains(all, "[NAME]") || !strings.Contains(all, "thank you") {
		t.Errorf("messages without the markers or the rest: %s", all)
	}
	// The envelope: the name, and the card read across two finals (one
	// entity in each).
	res := s.result(12)
	s.piiEnvelope(res)
	if list, _ := res.PIIRedaction.Results.([]map[string]any); !res.PIIRedaction.Success || len(list) != 3 ||
		list[0]["entity_type"] != "NAME" || list[1]["entity_type"] != "CREDIT_CARD" || list[2]["entity_type"] != "CREDIT_CARD" {
		t.Errorf("pii_redaction envelope %+v", res.PIIRedaction)
	}
	if len(s.finals) != 4 {
		t.Fatalf("%d finals kept, want 4", len(s.finals))
	}
	for _, u := range s.finals {
		for _, sec := range secrets {
			if strings.Contains(u.Text, sec) {
				t.Errorf("final %q keeps %q", u.Text, sec)
			}
		}
	}

	// The recording: µ-law, 12 s, loud everywhere; blanked over the name
	// and the card (each word's time, 80 ms either side), kept elsewhere.
	f := media.Format{Encoding: media.MuLaw, BitDepth: 8, SampleRate: 8000, Channels: 1}
	path := filepath.Join(t.TempDir(), "rec.wav")
	audio := make([]byte, 12*8000)
	for i := range audio {
		audio[i] = byte(i%200 + 20)
	}
	if err := os.WriteFile(path, append(media.AppendWAVHeader(nil, f, int64(len(audio))), audio...), 0o600); err != nil {
		t.Fatal(err)
	}
	blanked, err := s.blankRecording(path)
	if err != nil || !blanked {
		t.Fatalf("blankRecording = %v, %v", blanked, err)
	}
	got, _ := os.ReadFile(path)
	got = got[media.WAVHeaderSize:]
	silent := func(from, to float64) bool {
		for _, b := range got[int(from*8000):int(to*8000)] {
			if b != 0xff {
				return false
			}
		}
		return true
	}
	name, card := [2]float64{0.9, 1.45}, [2]float64{2.9, 7.35} // sarah miller; four ... the last one
	for _, sp := range [][2]float64{name, card} {
		if !silent(sp[0]-0.07, sp[1]+0.07) {
			t.Errorf("recording not silent over %v", sp)
		}
	}
	for _, keep := range [][2]float64{{0, 0.8}, {1.55, 2.8}, {7.45, 12}} {
		for i := int(keep[0] * 8000); i < int(keep[1]*8000); i++ {
			if got[i] != audio[i] {
				t.Fatalf("recording changed at %.3f s, outside the entities", float64(i)/8000)
			}
		}
	}
}

// TestLiveRedactionAudioOff: pii_redaction_config.audio off keeps the
// recording as it came (the text is still redacted).
func TestLiveRedactionAudioOff(t *testing.T) {
	s := redactSession(&params.Live{PIIRedaction: true, PIIRedactionConfig: &params.PIIRedactionConfig{EntityTypes: []string{"NAME"}, Audio: params.AudioOff}})
	s.onEvent(recognizer.Event{Kind: recognizer.EventFinal, ID: 1, Utterance: utt(0, "my name is sarah miller")})
	if strings.Contains(strings.Join(s.messages.messages(), ""), "sarah") {
		t.Error("the name went out")
	}
	if blanked, err := s.blankRecording(filepath.Join(t.TempDir(), "none.wav")); blanked || err != nil {
		t.Errorf("audio off: blankRecording = %v, %v", blanked, err)
	}
}

// noSignals is a Signals that ignores what it is told.
type noSignals struct{}

func (noSignals) Queued(bool, bool)           {}
func (noSignals) Finished(store.Status)       {}
func (noSignals) AdmitRecording(string) error { return nil }
func (noSignals) Audit(store.AuditEntry)      {}

// TestBatchPassDropsUnredacted: a batch pass that could not blank the
// recording over what it redacted ends failed, and the recording goes
// with it (the record stops naming it, then it is removed); a pass that
// failed otherwise keeps it.
func TestBatchPassDropsUnredacted(t *testing.T) {
	db, err := bolt.Open(t.TempDir(), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	lp, err := params.DecodeLiveOptions(nil)
	if err != nil {
		t.Fatal(err)
	}
	pb, _ := json.Marshal(lp)
	s := &Service{db: db, deps: Deps{Signals: noSignals{}}, log: slog.New(slog.DiscardHandler)}
	for _, tc := range []struct {
		id    string
		cause error
		kept  bool
	}{
		{"unredacted", fmt.Errorf("%w: disk error", errUnredacted), false},
		{"other", errors.New("engine gone"), true},
	} {
		blob := "live-" + tc.id
		if _, err := db.WriteBlob(blob, strings.NewReader("RIFF recording"), 0); err != nil {
			t.Fatal(err)
		}
		if err := db.CreateJob(&store.Job{ID: tc.id, Account: "a", Kind: store.KindLive, Status: store.StatusDone, Params: pb,
			Result: []byte(`{}`), Blob: blob, BatchPass: store.BatchPassRunning, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		s.endBatchPass(t.Context(), s.log, tc.id, nil, tc.cause, 0)
		j, err := db.Job(tc.id)
		if err != nil {
			t.Fatal(err)
		}
		_, berr := db.OpenBlob(blob)
		if j.PostSessionMetadata["batch_pass"] != batchPassFailed || (j.Blob == blob) != tc.kept || (berr == nil) != tc.kept {
			t.Errorf("%s: batch_pass %v, blob %q (%v), want kept %v", tc.id, j.PostSessionMetadata["batch_pass"], j.Blob, berr, tc.kept)
		}
	}
}
