package recognizer_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
)

// liveChunk is what the doors deliver at a time: 20 ms of 16 kHz audio.
const liveChunk = recognizer.SampleRate / 50

func liveEngine(t testing.TB, decoders int) *sphinx.Engine {
	t.Helper()
	var cfg sphinx.Config
	cfg.SetDefaults()
	cfg.Decoders = decoders
	e, err := sphinx.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// liveClip returns a clip of the shared speech set and its channels.
func liveClip(t testing.TB, file string) (recognizertest.Clip, [][]int16) {
	t.Helper()
	for _, c := range recognizertest.Manifest(t) {
		if c.File == file {
			return c, recognizertest.ReadWAV16(t, c.Path)
		}
	}
	t.Fatalf("clip %s not in manifest", file)
	return recognizertest.Clip{}, nil
}

// liveHiss is n samples of seeded white noise with the given RMS.
func liveHiss(n int, rms float64, seed uint64) []int16 {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(max(-32768, min(32767, r.NormFloat64()*rms)))
	}
	return out
}

func liveRMS(x []int16) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s / float64(max(1, len(x))))
}

// liveMix adds noise (repeated as needed) to pcm so that the ratio of
// pcm's RMS to the noise's is snrDB.
func liveMix(pcm, noise []int16, snrDB float64) []int16 {
	g := liveRMS(pcm) / liveRMS(noise) / math.Pow(10, snrDB/20)
	out := make([]int16, len(pcm))
	for i, v := range pcm {
		out[i] = int16(max(-32768, min(32767, float64(v)+g*float64(noise[i%len(noise)]))))
	}
	return out
}

func cat(parts ...[]int16) []int16 {
	var out []int16
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// streamLive writes pcm to l in 20 ms chunks, as a door would.
func streamLive(t testing.TB, l *recognizer.Live, pcm [][]int16) {
	t.Helper()
	for i := 0; i < len(pcm[0]); i += liveChunk {
		chunk := make([][]int16, len(pcm))
		for c := range pcm {
			chunk[c] = pcm[c][i:min(i+liveChunk, len(pcm[c]))]
		}
		if err := l.Write(t.Context(), chunk); err != nil {
			t.Fatal(err)
		}
	}
}

// runLive streams pcm through a new Live, flushes and closes it, checks
// the event invariants and returns the events.
func runLive(t testing.TB, e recognizer.Engine, cfg recognizer.LiveConfig, pcm [][]int16) []recognizer.Event {
	t.Helper()
	cfg.Channels = len(pcm)
	var evs []recognizer.Event
	l, err := recognizer.NewLive(e, cfg, func(ev recognizer.Event) { evs = append(evs, ev) })
	if err != nil {
		t.Fatal(err)
	}
	streamLive(t, l, pcm)
	if err := l.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	seconds := float64(len(pcm[0])) / recognizer.SampleRate
	if d := l.Duration(); d != seconds {
		t.Errorf("Duration %.3f, want %.3f", d, seconds)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, evs, cfg.Channels, seconds)
	return evs
}

// checkEvents asserts what every event stream must satisfy: per channel,
// speech_start and speech_end alternate (start first, all closed at the
// end) with non-decreasing times; partials and finals come only inside an
// utterance or right after its speech_end; final words are in session
// time, ordered, inside the audio; IDs are dense from 0 in order of first
// use and shared by an utterance's partials and final.
func checkEvents(t testing.TB, evs []recognizer.Event, channels int, seconds float64) {
	t.Helper()
	type chState struct {
		open     bool
		speechAt float64 // time of the last speech event
		emitAt   float64 // time of the last partial, final or error
		lastWord float64
		id       int // current utterance's ID, -1 none
	}
	st := make([]chState, channels)
	for i := range st {
		st[i].id = -1
	}
	nextID := 0
	for i, ev := range evs {
		if ev.Channel < 0 || ev.Channel >= channels {
			t.Fatalf("event %d: channel %d of %d", i, ev.Channel, channels)
		}
		s := &st[ev.Channel]
		last := &s.emitAt
		if ev.Kind == recognizer.EventSpeechStart || ev.Kind == recognizer.EventSpeechEnd {
			last = &s.speechAt
		}
		if ev.Time < *last-1e-9 || ev.Time > seconds+1e-9 {
			t.Errorf("event %d %v ch %d: time %.3f before %.3f or after the audio (%.3f)", i, ev.Kind, ev.Channel, ev.Time, *last, seconds)
		}
		*last = ev.Time
		switch ev.Kind {
		case recognizer.EventSpeechStart:
			if s.open {
				t.Errorf("event %d: speech_start on channel %d inside an utterance", i, ev.Channel)
			}
			s.open = true
		case recognizer.EventSpeechEnd:
			if !s.open {
				t.Errorf("event %d: speech_end on channel %d without speech_start", i, ev.Channel)
			}
			s.open = false
		case recognizer.EventPartial, recognizer.EventFinal:
			u := ev.Utterance
			if u.Channel != ev.Channel || u.Language != "en" || u.Text == "" {
				t.Errorf("event %d %v: utterance %+v", i, ev.Kind, u)
			}
			if ev.Kind == recognizer.EventPartial && !s.open {
				t.Errorf("event %d: partial outside speech on channel %d", i, ev.Channel)
			}
			if s.id < 0 {
				if ev.ID != nextID {
					t.Errorf("event %d %v: new utterance ID %d, want %d", i, ev.Kind, ev.ID, nextID)
				}
				nextID = max(nextID, ev.ID+1)
				s.id = ev.ID
			} else if ev.ID != s.id {
				t.Errorf("event %d %v: ID %d, want %d (same utterance)", i, ev.Kind, ev.ID, s.id)
			}
			if ev.Kind == recognizer.EventPartial {
				continue
			}
			s.id = -1
			if len(u.Words) == 0 || u.Text != joinWords(u.Words) {
				t.Errorf("event %d: final %+v", i, u)
				continue
			}
			if u.Start != u.Words[0].Start || u.End != u.Words[len(u.Words)-1].End {
				t.Errorf("event %d: final [%.2f, %.2f] vs its words", i, u.Start, u.End)
			}
			for _, w := range u.Words {
				if w.Start < s.lastWord-1e-9 || w.End < w.Start || w.End > ev.Time+1e-9 || w.Confidence < 0 || w.Confidence > 1 {
					t.Errorf("event %d: word %+v (previous end %.2f, final at %.2f)", i, w, s.lastWord, ev.Time)
				}
				s.lastWord = w.End
			}
		case recognizer.EventError:
			if ev.Err == nil {
				t.Errorf("event %d: error event without Err", i)
			}
		default:
			t.Errorf("event %d: kind %v", i, ev.Kind)
		}
	}
	for c, s := range st {
		if s.open {
			t.Errorf("channel %d: utterance still open after Flush", c)
		}
	}
}

func joinWords(ws []recognizer.Word) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.Word
	}
	return strings.Join(parts, " ")
}

// finals joins the final transcripts of one channel.
func finals(evs []recognizer.Event, channel int) string {
	var parts []string
	for _, ev := range evs {
		if ev.Kind == recognizer.EventFinal && ev.Channel == channel {
			parts = append(parts, ev.Utterance.Text)
		}
	}
	return strings.Join(parts, " ")
}

func count(evs []recognizer.Event, kind recognizer.EventKind) int {
	n := 0
	for _, ev := range evs {
		if ev.Kind == kind {
			n++
		}
	}
	return n
}

// speechSeconds sums speech_end - speech_start over all channels.
func speechSeconds(evs []recognizer.Event) float64 {
	open := map[int]float64{}
	var sum float64
	for _, ev := range evs {
		switch ev.Kind {
		case recognizer.EventSpeechStart:
			open[ev.Channel] = ev.Time
		case recognizer.EventSpeechEnd:
			sum += ev.Time - open[ev.Channel]
		}
	}
	return sum
}

func TestLiveConfig(t *testing.T) {
	var def recognizer.LiveConfig
	def.SetDefaults()
	if def.SpeechThreshold == nil || *def.SpeechThreshold != recognizer.DefaultSpeechThreshold {
		t.Errorf("default speech threshold %v, want %v", def.SpeechThreshold, recognizer.DefaultSpeechThreshold)
	}
	want := recognizer.LiveConfig{Channels: 1, Endpointing: 50 * time.Millisecond, MaxWithoutEndpointing: 5 * time.Second,
		SpeechThreshold: def.SpeechThreshold, PartialInterval: 250 * time.Millisecond, DecoderWait: 3 * time.Second}
	if !reflect.DeepEqual(def, want) {
		t.Errorf("defaults %+v, want %+v", def, want)
	}
	// An asked 0 (the most sensitive setting) is kept, not taken for unset:
	// speech_threshold 0 ran as 0.6 before (issue 16).
	zero := 0.0
	asked := recognizer.LiveConfig{SpeechThreshold: &zero}
	asked.SetDefaults()
	if *asked.SpeechThreshold != 0 {
		t.Errorf("speech threshold 0 became %v", *asked.SpeechThreshold)
	}
	tests := []struct {
		name string
		edit func(*recognizer.LiveConfig)
		key  string // "" = valid
	}{
		{"defaults", func(*recognizer.LiveConfig) {}, ""},
		{"contract extremes", func(c *recognizer.LiveConfig) {
			one := 1.0
			c.Channels, c.Endpointing, c.MaxWithoutEndpointing, c.SpeechThreshold = 8, 10*time.Second, 60*time.Second, &one
		}, ""},
		{"contract minimums", func(c *recognizer.LiveConfig) {
			zero := 0.0
			c.Endpointing, c.MaxWithoutEndpointing, c.SpeechThreshold = 10*time.Millisecond, 5*time.Second, &zero
		}, ""},
		{"channels 9", func(c *recognizer.LiveConfig) { c.Channels = 9 }, "channels"},
		{"channels -1", func(c *recognizer.LiveConfig) { c.Channels = -1 }, "channels"},
		{"endpointing 5ms", func(c *recognizer.LiveConfig) { c.Endpointing = 5 * time.Millisecond }, "endpointing"},
		{"endpointing 11s", func(c *recognizer.LiveConfig) { c.Endpointing = 11 * time.Second }, "endpointing"},
		{"max 4s", func(c *recognizer.LiveConfig) { c.MaxWithoutEndpointing = 4 * time.Second }, "max_without_endpointing"},
		{"max 61s", func(c *recognizer.LiveConfig) { c.MaxWithoutEndpointing = 61 * time.Second }, "max_without_endpointing"},
		{"threshold 1.5", func(c *recognizer.LiveConfig) { v := 1.5; c.SpeechThreshold = &v }, "speech_threshold"},
		{"threshold NaN", func(c *recognizer.LiveConfig) { v := math.NaN(); c.SpeechThreshold = &v }, "speech_threshold"},
		{"partials every 1s", func(c *recognizer.LiveConfig) { c.PartialInterval = time.Second }, "partial_interval"},
		{"decoder wait -1", func(c *recognizer.LiveConfig) { c.DecoderWait = -1 }, "decoder_wait"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := def
			tt.edit(&c)
			err := c.Validate()
			switch {
			case tt.key == "" && err != nil:
				t.Errorf("valid config rejected: %v", err)
			case tt.key != "" && (err == nil || !strings.Contains(err.Error(), " "+tt.key+":")):
				t.Errorf("error %v, want one naming %s", err, tt.key)
			}
		})
	}
	kinds := map[recognizer.EventKind]string{recognizer.EventSpeechStart: "speech_start", recognizer.EventSpeechEnd: "speech_end",
		recognizer.EventPartial: "partial", recognizer.EventFinal: "final", recognizer.EventError: "error"}
	for k, s := range kinds {
		if k.String() != s {
			t.Errorf("%d.String() = %q, want %q", int(k), k.String(), s)
		}
	}
}

func TestLiveBadInput(t *testing.T) {
	e := liveEngine(t, 1)
	emit := func(recognizer.Event) {}
	if _, err := recognizer.NewLive(e, recognizer.LiveConfig{Language: "fr"}, emit); !errors.Is(err, recognizer.ErrLanguage) {
		t.Errorf("fr: %v, want ErrLanguage", err)
	}
	if _, err := recognizer.NewLive(e, recognizer.LiveConfig{Channels: 9}, emit); err == nil {
		t.Error("9 channels accepted")
	}
	if _, err := recognizer.NewLive(e, recognizer.LiveConfig{}, nil); err == nil {
		t.Error("nil emit accepted")
	}
	l, err := recognizer.NewLive(e, recognizer.LiveConfig{Channels: 2}, emit)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for name, pcm := range map[string][][]int16{
		"one channel":     {make([]int16, 320)},
		"three channels":  {make([]int16, 320), make([]int16, 320), make([]int16, 320)},
		"unequal lengths": {make([]int16, 320), make([]int16, 300)},
	} {
		if err := l.Write(t.Context(), pcm); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	if l.Duration() != 0 {
		t.Errorf("rejected writes counted: %.3f s", l.Duration())
	}
}

// TestLiveNoSpeech streams sounds that are not speech: nothing may start.
func TestLiveNoSpeech(t *testing.T) {
	t.Parallel()
	e := liveEngine(t, 1)
	tests := []struct {
		name string
		pcm  []int16
	}{
		{"digital silence", make([]int16, 3*recognizer.SampleRate)},
		{"quiet hiss", liveHiss(3*recognizer.SampleRate, 30, 1)},
		{"loud steady hiss", liveHiss(3*recognizer.SampleRate, 2000, 2)},
		{"silence then hiss", cat(make([]int16, recognizer.SampleRate), liveHiss(2*recognizer.SampleRate, 1000, 3))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := runLive(t, e, recognizer.LiveConfig{Partials: true}, [][]int16{tt.pcm})
			if len(evs) != 0 {
				t.Errorf("%d events, first %+v", len(evs), evs[0])
			}
		})
	}
}

// TestLiveGoForward streams the short command twice with a pause between:
// two utterances, exact text, the second in session time after the
// first clip, and partials at the cadence when enabled (none otherwise).
func TestLiveGoForward(t *testing.T) {
	t.Parallel()
	e := liveEngine(t, 1)
	_, gf := liveClip(t, "pocketsphinx-goforward.wav")
	pcm := cat(gf[0], liveHiss(recognizer.SampleRate, 20, 4), gf[0])
	second := float64(len(gf[0])+recognizer.SampleRate) / recognizer.SampleRate

	for _, partials := range []bool{true, false} {
		evs := runLive(t, e, recognizer.LiveConfig{Partials: partials}, [][]int16{pcm})
		if got, want := finals(evs, 0), "go forward ten meters go forward ten meters"; got != want {
			t.Errorf("partials %v: finals %q, want %q", partials, got, want)
		}
		var lateWords int
		for _, ev := range evs {
			if ev.Kind == recognizer.EventFinal && ev.Utterance.Start >= second {
				lateWords += len(ev.Utterance.Words)
			}
		}
		if lateWords != 4 {
			t.Errorf("partials %v: %d words after %.2f s, want the 4 of the second clip", partials, lateWords, second)
		}
		n := count(evs, recognizer.EventPartial)
		if !partials {
			if n != 0 {
				t.Errorf("%d partials with Partials off", n)
			}
			continue
		}
		checkPartialCadence(t, evs, 250*time.Millisecond)
	}
}

// optionsSeen is an engine that records the options of every stream it
// opens.
type optionsSeen struct {
	*sphinx.Engine
	seen []recognizer.StreamOptions
}

func (e *optionsSeen) NewStream(ctx context.Context, o recognizer.StreamOptions) (recognizer.Stream, error) {
	e.seen = append(e.seen, o)
	return e.Engine.NewStream(ctx, o)
}

// TestLiveNarrowband: a session's Narrowband reaches every stream it
// opens (StreamOptions.Narrowband), so a wideband model decoding a call
// makes its live search for telephone-band audio.
func TestLiveNarrowband(t *testing.T) {
	t.Parallel()
	_, gf := liveClip(t, "pocketsphinx-goforward.wav")
	pcm := cat(gf[0], liveHiss(recognizer.SampleRate, 20, 4), gf[0])
	for _, narrow := range []bool{true, false} {
		e := &optionsSeen{Engine: liveEngine(t, 1)}
		evs := runLive(t, e, recognizer.LiveConfig{Narrowband: narrow}, [][]int16{pcm})
		if got, want := finals(evs, 0), "go forward ten meters go forward ten meters"; got != want {
			t.Errorf("narrowband %v: finals %q, want %q", narrow, got, want)
		}
		if len(e.seen) == 0 {
			t.Fatalf("narrowband %v: no stream opened", narrow)
		}
		for i, o := range e.seen {
			if o.Narrowband != narrow {
				t.Errorf("narrowband %v: stream %d opened with Narrowband %v", narrow, i, o.Narrowband)
			}
		}
	}
}

// TestLiveStartsInSpeech: a session whose first sample is already speech
// (no silence to learn the noise floor from) still transcribes it.
func TestLiveStartsInSpeech(t *testing.T) {
	t.Parallel()
	e := liveEngine(t, 1)
	_, gf := liveClip(t, "pocketsphinx-goforward.wav")
	start := recognizer.SampleRate * 48 / 100 // speech_start of the whole clip is at 0.50 s
	evs := runLive(t, e, recognizer.LiveConfig{}, [][]int16{gf[0][start:]})
	if got := finals(evs, 0); got != "go forward ten meters" {
		t.Errorf("finals %q", got)
	}
	if evs[0].Kind != recognizer.EventSpeechStart || evs[0].Time > 0.1 {
		t.Errorf("first event %v at %.2f s, want speech_start at once", evs[0].Kind, evs[0].Time)
	}
}

// checkPartialCadence asserts the requirement (a partial at least every
// 500 ms of speech once the decoder has words) and the configured cadence
// (partials at interval multiples; at least half as many as the speech
// time allows, the rest being the start of each utterance before the
// first word is out).
func checkPartialCadence(t *testing.T, evs []recognizer.Event, interval time.Duration) {
	t.Helper()
	last := map[int]float64{}
	n := 0
	for _, ev := range evs {
		if ev.Kind != recognizer.EventPartial {
			continue
		}
		n++
		if prev, ok := last[ev.ID]; ok && ev.Time-prev > 0.5+1e-9 {
			t.Errorf("utterance %d: partials at %.2f and %.2f s, more than 500 ms apart", ev.ID, prev, ev.Time)
		}
		last[ev.ID] = ev.Time
	}
	speech := speechSeconds(evs)
	want := int(0.5 * speech / interval.Seconds())
	t.Logf("%d partials in %.2f s of speech (interval %v)", n, speech, interval)
	if n < want {
		t.Errorf("%d partials in %.2f s of speech, want >= %d", n, speech, want)
	}
}

// TestLiveEndpointing streams one clip with the contract's shortest useful
// endpointing and with a long one: the long one gives fewer, longer
// utterances and a better transcript (the decoder sees whole phrases).
func TestLiveEndpointing(t *testing.T) {
	t.Parallel()
	e := liveEngine(t, 2)
	c, pcm := liveClip(t, "ls-test-clean-1995-1837-0001.wav")
	type result struct {
		starts int
		mean   float64
		wer    float64
	}
	run := func(ep time.Duration) result {
		evs := runLive(t, e, recognizer.LiveConfig{Endpointing: ep, MaxWithoutEndpointing: 20 * time.Second}, pcm)
		n := count(evs, recognizer.EventSpeechStart)
		r := result{n, speechSeconds(evs) / float64(max(n, 1)), recognizertest.WER(c.Transcript, finals(evs, 0))}
		t.Logf("endpointing %v: %d utterances, mean %.2f s, WER %.3f: %q", ep, r.starts, r.mean, r.wer, finals(evs, 0))
		return r
	}
	short := run(50 * time.Millisecond)
	long := run(time.Second)
	if long.starts >= short.starts || long.mean <= short.mean {
		t.Errorf("endpointing 1s: %d utterances of %.2f s; 50ms: %d of %.2f s; want fewer, longer", long.starts, long.mean, short.starts, short.mean)
	}
	// Measured 2026-11-21: 50ms 0.300..0.367 (6..8 utterances, varying
	// with VAD tuning), 1s 0.167 (whole-clip batch decode 0.100); the
	// bounds add about two words of 30.
	if short.wer > 0.43 || long.wer > 0.24 {
		t.Errorf("WER %.3f (50ms), %.3f (1s); want <= 0.43, 0.24", short.wer, long.wer)
	}
}

// TestLiveMaxWithoutEndpointing streams 11.5 s of speech whose pauses are
// shorter than the endpointing: utterances are cut at the 5 s limit.
func TestLiveMaxWithoutEndpointing(t *testing.T) {
	t.Parallel()
	e := liveEngine(t, 1)
	a, pa := liveClip(t, "ljspeech-LJ001-0001.wav")
	b, pb := liveClip(t, "ljspeech-LJ001-0002.wav")
	pcm := [][]int16{cat(pa[0], pb[0])}
	maxUtt := 5 * time.Second
	evs := runLive(t, e, recognizer.LiveConfig{Endpointing: 2 * time.Second, MaxWithoutEndpointing: maxUtt}, pcm)
	nFinal, nStart := count(evs, recognizer.EventFinal), count(evs, recognizer.EventSpeechStart)
	if nFinal < 3 || nStart >= nFinal {
		t.Errorf("%d finals, %d speech starts; want >= 3 finals (11.5 s cut at 5 s), more than speech starts", nFinal, nStart)
	}
	for _, ev := range evs {
		if ev.Kind == recognizer.EventFinal && ev.Utterance.End-ev.Utterance.Start > maxUtt.Seconds() {
			t.Errorf("final of %.2f s > %v: %+v", ev.Utterance.End-ev.Utterance.Start, maxUtt, ev.Utterance)
		}
	}
	wer := recognizertest.WER(a.Transcript+" "+b.Transcript, finals(evs, 0))
	t.Logf("%d finals, WER %.3f: %q", nFinal, wer, finals(evs, 0))
	// Measured 2026-11-21: 0.211.
	if wer > 0.3 {
		t.Errorf("WER %.3f > 0.3", wer)
	}
}

// TestLiveChannels streams the two-speaker stereo clip: each channel gets
// its own utterances, transcribed as well as the batch pipeline does.
func TestLiveChannels(t *testing.T) {
	t.Parallel()
	e := liveEngine(t, 2)
	_, pcm := liveClip(t, "stereo-two-speaker-librispeech.wav")
	evs := runLive(t, e, recognizer.LiveConfig{Endpointing: 300 * time.Millisecond, Partials: true}, pcm)
	tests := []struct {
		ref    string
		maxWER float64 // batch measured 0.18 and 0.8 (see TestTranscribeChannels)
	}{
		{"he began a confused complaint against the wizard who had vanished behind the curtain on the left", 0.3},
		{"the horizon seems extremely distant", 0.8},
	}
	for ch, tt := range tests {
		got := finals(evs, ch)
		wer := recognizertest.WER(tt.ref, got)
		t.Logf("channel %d: WER %.2f %q", ch, wer, got)
		if wer > tt.maxWER {
			t.Errorf("channel %d: WER %.2f > %.2f: %q", ch, wer, tt.maxWER, got)
		}
		starts := 0
		for _, ev := range evs {
			if ev.Kind == recognizer.EventSpeechStart && ev.Channel == ch {
				starts++
			}
		}
		if starts == 0 {
			t.Errorf("channel %d: no speech_start", ch)
		}
	}
}

// TestLiveDecoderWait holds the only decoder of the engine: an utterance
// gets speech events and an ErrAtCapacity error after DecoderWait, and
// the next one, once the decoder is free, is transcribed.
func TestLiveDecoderWait(t *testing.T) {
	e := liveEngine(t, 1)
	_, gf := liveClip(t, "pocketsphinx-goforward.wav")
	holder, err := e.NewStream(t.Context(), recognizer.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var evs []recognizer.Event
	l, err := recognizer.NewLive(e, recognizer.LiveConfig{DecoderWait: 100 * time.Millisecond, Partials: true},
		func(ev recognizer.Event) { evs = append(evs, ev) })
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	streamLive(t, l, gf)
	var kinds []string
	for _, ev := range evs {
		kinds = append(kinds, ev.Kind.String())
	}
	if got := strings.Join(kinds, " "); got != "speech_start error speech_end" {
		t.Fatalf("events %q, want speech_start error speech_end", got)
	}
	if !errors.Is(evs[1].Err, recognizer.ErrAtCapacity) || evs[1].Channel != 0 {
		t.Errorf("error event %+v, want ErrAtCapacity on channel 0", evs[1])
	}

	holder.Close()
	evs = nil
	streamLive(t, l, gf)
	if err := l.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, evs, 1, l.Duration())
	if got := finals(evs, 0); got != "go forward ten meters" {
		t.Errorf("after release: finals %q", got)
	}
	if _, busy := e.Stats(); busy != 0 {
		t.Errorf("%d decoders busy after the final", busy)
	}
}

// TestLiveFlushClose: Flush ends an utterance in the middle of speech with
// its speech_end and final; Close releases the decoder of an open
// utterance without emitting, is idempotent, and later calls fail.
func TestLiveFlushClose(t *testing.T) {
	goroutines := runtime.NumGoroutine()
	e := liveEngine(t, 1)
	_, gf := liveClip(t, "pocketsphinx-goforward.wav")
	half := [][]int16{gf[0][:len(gf[0])*3/5]} // ends inside "ten"

	var evs []recognizer.Event
	l, err := recognizer.NewLive(e, recognizer.LiveConfig{OnePassFinals: true}, func(ev recognizer.Event) { evs = append(evs, ev) })
	if err != nil {
		t.Fatal(err)
	}
	streamLive(t, l, half)
	if n := count(evs, recognizer.EventSpeechEnd); n != 0 || count(evs, recognizer.EventSpeechStart) != 1 {
		t.Fatalf("before Flush: %d events, want one speech_start", len(evs))
	}
	if err := l.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, evs, 1, l.Duration())
	if got := finals(evs, 0); !strings.HasPrefix(got, "go forward") {
		t.Errorf("flushed final %q, want it to start with \"go forward\"", got)
	}
	if evs[len(evs)-1].Kind != recognizer.EventFinal || evs[len(evs)-2].Kind != recognizer.EventSpeechEnd {
		t.Errorf("Flush emitted %v, want ... speech_end final", evs)
	}
	n := len(evs)
	if err := l.Flush(t.Context()); err != nil || len(evs) != n {
		t.Errorf("second Flush: %v, %d new events", err, len(evs)-n)
	}
	if _, busy := e.Stats(); busy != 0 {
		t.Errorf("%d decoders busy after Flush", busy)
	}

	streamLive(t, l, half) // opens an utterance again
	// With one-pass finals a decoder is held only while a final is decoded.
	if _, busy := e.Stats(); busy != 0 {
		t.Fatalf("%d decoders busy during speech with one-pass finals, want 0", busy)
	}
	n = len(evs)
	for range 2 {
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if len(evs) != n {
		t.Errorf("Close emitted %d events", len(evs)-n)
	}
	if _, busy := e.Stats(); busy != 0 {
		t.Errorf("%d decoders busy after Close", busy)
	}
	if err := l.Write(t.Context(), half); !errors.Is(err, recognizer.ErrClosed) {
		t.Errorf("Write after Close: %v, want ErrClosed", err)
	}
	if err := l.Flush(t.Context()); !errors.Is(err, recognizer.ErrClosed) {
		t.Errorf("Flush after Close: %v, want ErrClosed", err)
	}
	if g := runtime.NumGoroutine(); g > goroutines {
		t.Errorf("%d goroutines after Close, %d before", g, goroutines)
	}
}

// TestLiveCancel: a Write whose context ends while it waits for a decoder
// returns the context's error.
func TestLiveCancel(t *testing.T) {
	e := liveEngine(t, 1)
	_, gf := liveClip(t, "pocketsphinx-goforward.wav")
	holder, err := e.NewStream(t.Context(), recognizer.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	l, err := recognizer.NewLive(e, recognizer.LiveConfig{}, func(recognizer.Event) {})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := l.Write(ctx, gf); !errors.Is(err, context.Canceled) {
		t.Errorf("Write: %v, want context.Canceled", err)
	}
}

// TestLiveEnhancer measures the SpeexDSP enhancer on two clips, clean and
// with white noise at 10 dB SNR, counting word errors over both: it must
// help on the noisy audio and not hurt on the clean audio.
func TestLiveEnhancer(t *testing.T) {
	t.Parallel()
	e := liveEngine(t, 2)
	type run struct {
		clip, cond string
		pcm        []int16
		enh        bool
		ref        []string
		errs       int
	}
	var runs []*run
	for i, file := range []string{"ls-test-clean-1995-1837-0001.wav", "ls-test-clean-1089-134691-0001.wav"} {
		c, pcm := liveClip(t, file)
		pad := make([]int16, recognizer.SampleRate/2) // digital silence around the clip
		clean := cat(pad, pcm[0], pad)
		noisy := liveMix(clean, liveHiss(len(clean), 1000, uint64(6+i)), 10)
		ref := recognizertest.Normalize(c.Transcript)
		for _, enh := range []bool{false, true} {
			runs = append(runs, &run{file, "clean", clean, enh, ref, 0}, &run{file, "noisy", noisy, enh, ref, 0})
		}
	}
	t.Run("run", func(t *testing.T) {
		for _, r := range runs {
			t.Run(fmt.Sprintf("%s/%s/enhancer=%v", r.clip, r.cond, r.enh), func(t *testing.T) {
				t.Parallel()
				cfg := recognizer.LiveConfig{Endpointing: 300 * time.Millisecond, AudioEnhancer: r.enh, DecoderWait: time.Minute}
				hyp := finals(runLive(t, e, cfg, [][]int16{r.pcm}), 0)
				r.errs = recognizertest.EditDistance(r.ref, recognizertest.Normalize(hyp))
				t.Logf("%d/%d errors: %q", r.errs, len(r.ref), hyp)
			})
		}
	})
	wer := map[string]float64{} // "clean", "clean+enhancer", ...: over both clips
	words := map[string]int{}
	for _, r := range runs {
		k := r.cond
		if r.enh {
			k += "+enhancer"
		}
		wer[k] += float64(r.errs)
		words[k] += len(r.ref)
	}
	for k := range wer {
		wer[k] /= float64(words[k])
	}
	t.Logf("WER over %d words: clean %.3f, clean+enhancer %.3f, noisy %.3f, noisy+enhancer %.3f",
		words["clean"], wer["clean"], wer["clean+enhancer"], wer["noisy"], wer["noisy+enhancer"])
	// Measured 2026-11-21 (errors of 30 + 17 words): clean 6+3 (0.191),
	// clean+enhancer 5+1 (0.128), noisy 29+15 (0.936), noisy+enhancer
	// 19+13 (0.681). With another noise seed the second clip went 12 -> 13
	// errors: the gain comes mostly from the first clip. (Babble from four
	// other clips at 10 dB on the first clip: 0.867 without, 0.933 with;
	// PocketSphinx fails either way.)
	if wer["noisy+enhancer"] >= wer["noisy"]-0.1 {
		t.Errorf("noisy: WER %.3f with the enhancer, %.3f without; want at least 0.1 better", wer["noisy+enhancer"], wer["noisy"])
	}
	if wer["clean+enhancer"] > wer["clean"]+0.045 {
		t.Errorf("clean: WER %.3f with the enhancer, %.3f without; want at most 2 words worse", wer["clean+enhancer"], wer["clean"])
	}
}

// TestLiveChunking: how the audio is cut into Writes does not change the
// events (the VAD and the decoder work in whole 10 ms frames).
func TestLiveChunking(t *testing.T) {
	t.Parallel()
	e := liveEngine(t, 1)
	_, gf := liveClip(t, "pocketsphinx-goforward.wav")
	pcm := gf[0]
	run := func(chunk int) []recognizer.Event {
		var evs []recognizer.Event
		l, err := recognizer.NewLive(e, recognizer.LiveConfig{Partials: true}, func(ev recognizer.Event) { evs = append(evs, ev) })
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		for i := 0; i < len(pcm); i += chunk {
			if err := l.Write(t.Context(), [][]int16{pcm[i:min(i+chunk, len(pcm))]}); err != nil {
				t.Fatal(err)
			}
		}
		l.Flush(t.Context())
		return evs
	}
	want := run(liveChunk)
	if count(want, recognizer.EventFinal) == 0 || count(want, recognizer.EventPartial) == 0 {
		t.Fatalf("reference run: %d events, want finals and partials", len(want))
	}
	for _, chunk := range []int{7, 333, len(pcm)} {
		got := run(chunk)
		if len(got) != len(want) {
			t.Errorf("chunks of %d: %d events, want %d", chunk, len(got), len(want))
			continue
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.Kind != w.Kind || g.Time != w.Time || g.ID != w.ID || g.Utterance.Text != w.Utterance.Text {
				t.Errorf("chunks of %d: event %d %v %.2f %q, want %v %.2f %q", chunk, i, g.Kind, g.Time, g.Utterance.Text, w.Kind, w.Time, w.Utterance.Text)
				break
			}
		}
	}
}
