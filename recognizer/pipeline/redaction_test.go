package pipeline

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/pii"
	"github.com/earshot-dev/earshot/recognizer/pipeline/pipelinetest"
)

// call is what a caller said in the first utterance of the redaction
// test: a name, a card with its expiry and code, an e-mail address, a
// phone number and a social security number, as a recogniser writes them.
const call = "my name is sarah miller my card is four one one one one one one one one one one one one one one one " +
	"expires oh four twenty six the cvv is seven three one my email is john dot smith at example dot com " +
	"call me on four one five five five five two six seven one and my social is five three one two four eight seven six nine"

// secrets are pieces of call that no surface of the result may hold.
var secrets = []string{"sarah", "miller", "four one one one", "4111", "oh four twenty six", "seven three one",
	"john", "smith", "example dot com", "two six seven one", "five three one two", "531248769"}

// withCall returns m with its first utterance's words replaced by call,
// spread evenly over the utterance's time.
func withCall(m mixture) mixture {
	utts := make([]recognizer.Utterance, len(m.utts))
	copy(utts, m.utts)
	u := utts[0]
	fields := strings.Fields(call)
	step := (u.End - u.Start) / float64(len(fields))
	u.Words = make([]recognizer.Word, len(fields))
	for i, f := range fields {
		u.Words[i] = recognizer.Word{Word: f, Start: u.Start + float64(i)*step, End: u.Start + float64(i+1)*step, Confidence: 0.8}
	}
	u.Text = call
	utts[0] = u
	m.utts = utts
	return m
}

// TestRedactionReachesEverySurface runs a pre-recorded job's add-ons over
// real engine output with a call's personal data in it, with pii_redaction
// (GDPR and PCI) and every add-on that writes text: nothing of the call
// survives in any field of the result (full_transcript, utterances and
// their words, sentences, subtitles, diarization, sentiment, named
// entities, the extractive and the backend's summary, translation,
// audio_to_llm) nor in what is sent to the chat backend; the callback
// carries the same stored result (callback.ForJob's payload). MARKER
// and MASK both.
func TestRedactionReachesEverySurface(t *testing.T) {
	pipelinetest.CheckNoLeaks(t)
	m := withCall(buildMixture(t, 1.0, twoVoices))
	for _, mode := range []string{params.RedactMarker, params.RedactMask} {
		for _, backend := range []bool{false, true} {
			name := mode + " builtin"
			if backend {
				name = mode + " backend"
			}
			t.Run(name, func(t *testing.T) {
				p := allBuiltins()
				p.PIIRedactionConfig = &params.PIIRedactionConfig{EntityTypes: []string{"GDPR", "PCI"}, ProcessedTextType: mode}
				a := builtinAddons()
				var s *pipelinetest.ChatServer
				if backend {
					s = pipelinetest.NewChatServer(t)
					a = backendAddons(t, s.URL(), nil)
				}
				r, out := runAddons(t, a, m, false, [][]int16{m.pcm}, p)
				if env := envelopeOf(t, "pii_redaction", out["pii_redaction"]); len(env["results"].([]any)) < 6 {
					t.Errorf("pii_redaction found %d entities in the call: %v", len(env["results"].([]any)), env["results"])
				}
				b, err := json.Marshal(r)
				if err != nil {
					t.Fatal(err)
				}
				all := strings.ToLower(string(b))
				for k, v := range out {
					vb, _ := json.Marshal(v)
					for _, sec := range secrets {
						if strings.Contains(strings.ToLower(string(vb)), sec) {
							t.Errorf("%q survives in %s", sec, k)
						}
					}
				}
				if !strings.Contains(all, "printing") {
					t.Errorf("the rest of the transcript is gone: %.300s", all)
				}
				want := "[credit_card]"
				if mode == params.RedactMask {
					want = "**** *** *** ***"
				}
				if !strings.Contains(all, want) {
					t.Errorf("no %q in the result", want)
				}
				if !backend {
					return
				}
				reqs := s.Requests()
				if len(reqs) == 0 {
					t.Fatal("nothing sent to the chat backend")
				}
				for _, rq := range reqs {
					for _, sec := range secrets {
						if strings.Contains(strings.ToLower(rq.User), sec) {
							t.Errorf("%q sent to the chat backend: %.200s", sec, rq.User)
						}
					}
				}
				for _, k := range []string{"translation", "summarization", "audio_to_llm"} {
					if env := envelopeOf(t, k, out[k]); env["success"] != true {
						t.Errorf("%s failed: %v", k, env["error"])
					}
				}
			})
		}
	}
}

// TestRedactedAudio: a job with pii_redaction gets the audio spans of
// every entity it redacted (its words' times widened by pii.AudioGuard),
// with the fill pii_redaction_config.audio asks for (silence by default);
// audio off, or no pii_redaction, gets none.
func TestRedactedAudio(t *testing.T) {
	m := withCall(buildMixture(t, 1.0, twoVoices))
	for _, tc := range []struct {
		audio string
		want  media.Fill
	}{{"", media.FillSilence}, {params.AudioSilence, media.FillSilence}, {params.AudioTone, media.FillTone}, {params.AudioOff, 0}} {
		t.Run("audio "+tc.audio, func(t *testing.T) {
			p := &params.PreRecorded{PIIRedaction: true, PIIRedactionConfig: &params.PIIRedactionConfig{EntityTypes: []string{"GDPR", "PCI"}, Audio: tc.audio}}
			r, _ := runAddons(t, builtinAddons(), m, false, [][]int16{m.pcm}, p)
			ra := r.RedactedAudio
			if tc.want == 0 {
				if ra != nil {
					t.Fatalf("audio off: %+v", ra)
				}
				return
			}
			if ra == nil || ra.Fill != tc.want || len(ra.Channels) != 1 || len(ra.Spans) == 0 {
				t.Fatalf("RedactedAudio %+v", ra)
			}
			// Every word of the call that is a secret lies inside a span.
			for _, w := range m.utts[0].Words {
				secret := slices.ContainsFunc(secrets, func(s string) bool { return !strings.Contains(s, " ") && s == w.Word })
				if !secret {
					continue
				}
				if !slices.ContainsFunc(ra.Spans, func(s media.Span) bool {
					return s.Start <= w.Start-pii.AudioGuard+1e-9 && w.End+pii.AudioGuard-1e-9 <= s.End
				}) {
					t.Errorf("word %q (%.2f-%.2f) in no span: %v", w.Word, w.Start, w.End, ra.Spans)
				}
			}
		})
	}
	r, _ := runAddons(t, builtinAddons(), m, false, [][]int16{m.pcm}, &params.PreRecorded{})
	if r.RedactedAudio != nil {
		t.Errorf("no pii_redaction: %+v", r.RedactedAudio)
	}
}
