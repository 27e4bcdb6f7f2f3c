package e2e

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// accuracyClips are the clips TestLiveFinalsMatchBatch and
// TestLiveRecordMatchesPreRecorded send both ways:
// 29 s of read speech from three speakers, each clip with pauses the
// default 50 ms endpointing cuts into several utterances.
var accuracyClips = []string{
	"ls-test-clean-1089-134686-0000.wav",
	"ls-dev-clean-2412-153948-0000.wav",
	"librivox-sense-and-sensibility-01-0870.wav",
}

// maxLiveGap bounds, per rendition, how many points the WER of a live
// session's finals (default settings: 50 ms endpointing, no partials) may
// exceed the WER of a pre-recorded job on the same audio, both through the
// real daemon with the shipped models (the telephone-band model for 8 kHz,
// telephoneModel), over the clips above (86 words; one word is 1.16
// points). Measured 2026-11-24 21:50 UTC, the same in three runs:
//
//	pcm16k:  pre-recorded 31.40%, live 19.77%: gap -11.63 points
//	mulaw8k: pre-recorded 45.35%, live 46.51%: gap +1.16 points
//
// and 2026-11-25 02:40 UTC (finals read 400 ms after the hangover since
// 22:33, and wideband segments ending at a pause with their lattice):
// pcm16k live 17.44% (gap -13.95), mulaw8k live 44.19% (gap -1.16).
//
// Before, on the wideband model for both (no telephone model configured
// here), 2026-11-24 morning: pcm16k 31.40% / 29.07%, mulaw8k 68.60% /
// 66.28%; 2026-11-23, each utterance decoded on its own: pcm16k live
// 44.19%, mulaw8k 73.26%.
//
// The bounds are the gaps measured now plus two words (2.33 points),
// re-derived when the engine changes. Measured 2026-11-29 05:20-05:29 UTC
// (go test ./e2e -run 'TestLiveFinalsMatchBatch$', two runs, the same in
// both, on the shared 2-CPU box under other engineers' load):
//
//	pcm16k:               pre-recorded 31.40%, live 19.77%: gap -11.63
//	mulaw8k:              pre-recorded 45.35%, live 36.05%: gap  -9.30
//	pcm16k-endpointing1s: pre-recorded 31.40%, live 19.77%: gap -11.63
//
// 2026-11-29 11:26 UTC, with the telephone batch pool searching without
// the flat-lexicon pass (issue 41, recognizer/sphinx TelephoneBatch): the
// mu-law pre-recorded job 45.35% -> 34.88% (nine words fewer), live
// unchanged at 36.05%: gap +1.16. Its bound is now issue 14's target, 2
// points (one word of margin), not the measured gap plus two words
// (3.5), which would let live finals trail by more than the target.
//
// Before, the bounds were issue 14's targets (live finals no worse than
// the pre-recorded job at 16 kHz, at most 2 points worse at 8 kHz): 0 and
// 2 points, which let live finals lose ten and nine words of 86 unseen.
// The targets still hold under the tighter bounds.
//
// pcm16k-endpointing1s is a session with 1 s endpointing: its finals come
// from decoder segments as the default's do, and its gap bound, the
// default's, bounds how much worse they may be than the default session's
// measured 19.77% (two words). Measured
// 2026-11-28 16:50 UTC: 19.77%, as the default's; before, an endpointing
// of 300 ms or more made each utterance a decoder segment of its own, its
// final decoded at its end (cut at maximum_duration_without_endpointing
// inside speech), and this session's finals were 31.40%, 11.6 points worse
// than the default's (docs/live-tuning.md, 2026-11-28 16:00 UTC).
var maxLiveGap = map[string]float64{
	"pcm16k":               -9.3,
	"mulaw8k":              2.0,
	"pcm16k-endpointing1s": -9.3,
}

// maxLiveWER bounds the live finals' own WER where maxLiveGap no longer
// holds them as tightly as before: the mu-law gap bound went from -6.9 to
// +2.0 points on 2026-11-29 because the pre-recorded job got nine words
// better (see maxLiveGap), not because live finals may be worse. They
// were 36.05% before and after that change; the bound is that plus two
// words (2.33 points), as the gap bounds were derived.
//
// 2026-11-30, the pcm16k and mulaw8k sessions now in
// TestLiveRecordMatchesPreRecorded (a batch pass after each): pcm16k
// pre-recorded 31.40%, live 19.77%; mulaw8k pre-recorded 34.88%, live
// 34.88%; pcm16k-endpointing1s live 19.77%.
var maxLiveWER = map[string]float64{
	"mulaw8k": 36.05 + 2.33,
}

// checkLiveGap bounds the live finals' WER wl of a rendition against the
// pre-recorded job's wb on the same audio (maxLiveGap, maxLiveWER).
func checkLiveGap(t *testing.T, rendition string, wl, wb float64) {
	t.Helper()
	t.Logf("%s: pre-recorded WER %.2f%%, live finals %.2f%%: gap %.2f points", rendition, wb, wl, wl-wb)
	if wl-wb > maxLiveGap[rendition] {
		t.Errorf("live finals' WER %.2f%% is %.2f points above the pre-recorded job's %.2f%% (bound %.1f)", wl, wl-wb, wb, maxLiveGap[rendition])
	}
	if bound, ok := maxLiveWER[rendition]; ok && wl > bound {
		t.Errorf("live finals' WER %.2f%% > %.2f%%", wl, bound)
	}
}

// TestLiveFinalsMatchBatch sends each clip as a pre-recorded job and as a
// live WebSocket session with a long endpointing (1 s, 16 kHz PCM) and
// bounds the gap between the live finals' WER and the job's: the same
// bound as the default endpointing's, so a long endpointing costs at most
// the two words of 86 that bound leaves above the default's measured
// 19.77% (before 2026-11-30 this test also sent the default's pcm16k and
// mulaw8k sessions, and bounded the long endpointing's cost against the
// pcm16k session of the same run at 2.4 points; TestLiveRecordMatchesPreRecorded
// sends those sessions and checks their gap, checkLiveGap).
func TestLiveFinalsMatchBatch(t *testing.T) {
	// No batch pass: what is measured is the live finals the client got,
	// never the stored record a pass replaces (the pass is tested by
	// TestLiveRecordMatchesPreRecorded); with it on, each of the three
	// sessions' audio was decoded once more for no check.
	d := startDaemon(t, "", telephoneModel(t)+"live:\n  batch_pass: false\n")
	key := createKey(t, d.DataDir, "acme")
	for _, r := range []struct {
		name  string
		body  map[string]any
		tag   uint16 // WAV format tag for the pre-recorded upload
		rate  int
		audio func(path string) []byte
	}{
		{"pcm16k-endpointing1s", map[string]any{"endpointing": 1}, 1, 16000, func(p string) []byte { return pcmOf(t, p) }},
	} {
		t.Run(r.name, func(t *testing.T) {
			var batchErrs, liveErrs, words int
			for _, f := range accuracyClips {
				path, ref := clip(t, f)
				audio := r.audio(path)
				wav := filepath.Join(t.TempDir(), f)
				if err := os.WriteFile(wav, wavBytes(r.tag, r.rate, audio), 0o600); err != nil {
					t.Fatal(err)
				}
				job := submit(t, d, key, wav, func(url string) map[string]any { return map[string]any{"audio_url": url} })
				batch := job["result"].(map[string]any)["transcription"].(map[string]any)["full_transcript"].(string)

				s := d.createLive(key, r.body)
				bytesPerMs := r.rate / 1000
				if r.tag == 1 {
					bytesPerMs *= 2
				}
				msgs, code := runSession(t, s.URL, audio, bytesPerMs, 0)
				if code != 1000 {
					t.Fatalf("%s: close code %d", f, code)
				}
				var finals []string
				for _, m := range msgs {
					var tr struct {
						IsFinal   bool `json:"is_final"`
						Utterance struct{ Text string }
					}
					if m.Type == "transcript" && json.Unmarshal(m.Data, &tr) == nil && tr.IsFinal {
						finals = append(finals, tr.Utterance.Text)
					}
				}
				live := strings.Join(finals, " ")
				rw := recognizertest.Normalize(ref)
				be := recognizertest.EditDistance(rw, recognizertest.Normalize(batch))
				le := recognizertest.EditDistance(rw, recognizertest.Normalize(live))
				t.Logf("%s: pre-recorded %d errors %q; live %d errors in %d finals %q", f, be, batch, le, len(finals), live)
				batchErrs, liveErrs, words = batchErrs+be, liveErrs+le, words+len(rw)
			}
			checkLiveGap(t, r.name, 100*float64(liveErrs)/float64(words), 100*float64(batchErrs)/float64(words))
		})
	}
}

// wavBytes wraps mono audio in a canonical WAV header (tag 1 PCM 16-bit,
// 6 A-law, 7 mu-law).
func wavBytes(tag uint16, rate int, audio []byte) []byte {
	bps := 2
	if tag != 1 {
		bps = 1
	}
	var b bytes.Buffer
	b.WriteString("RIFF")
	binary.Write(&b, binary.LittleEndian, uint32(36+len(audio)))
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), tag, uint16(1), uint32(rate), uint32(rate * bps), uint16(bps), uint16(8 * bps)} {
		binary.Write(&b, binary.LittleEndian, v)
	}
	b.WriteString("data")
	binary.Write(&b, binary.LittleEndian, uint32(len(audio)))
	b.Write(audio)
	return b.Bytes()
}
