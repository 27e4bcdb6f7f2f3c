package e2e

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/ingest/dtmf"
	"github.com/earshot-dev/earshot/ingest/dtmf/dtmftest"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// sipInbandConfig routes the in-band DTMF test's calls: one with the
// default (in-band detection on for calls), one with the live options %s.
const sipInbandConfig = `
sip:
  listen: 127.0.0.1:0
  rtp_ports: 32900-32919
  max_calls: 4
  allow: [127.0.0.0/8]
  routes:
    - user: inband
      account: acme
      live: {custom_metadata: {call: inband}}
    - user: plain
      account: acme
      live: %s
`

// werInband bounds the record's WER of the call whose tones were removed:
// measured 0.464 (2026-11-29 07:55 UTC, 13 errors in 28 words), plus two
// words. The same clip without tones measures 0.393 (werBaresipPCMU): the
// 4 x 100 ms of speech under the tones are silenced with them.
const werInband = 0.54

// inbandKeys are the keys mixed into the call's speech: a card's first
// digits, and the keys around them.
const inbandKeys = "4929"

// TestSIPInbandDTMFBaresip: a real baresip PCMU call plays real speech
// with four DTMF keys mixed into it (100 ms tones at -7/-5 dBm0, as a
// phone sends them, over the speech, 2 s apart). The call's record holds
// four masked dtmf messages of source inband near the tones' times; its
// stored recording has no tone energy over the tones' spans (the G.711
// bytes there are digital silence), the speech around them is kept and
// still transcribed. The same call on a route with pci.inband_dtmf false
// keeps the tones in its recording and sends no key.
func TestSIPInbandDTMFBaresip(t *testing.T) {
	off, _ := json.Marshal(map[string]any{"custom_metadata": map[string]any{"call": "plain"}, "pci": map[string]any{"inband_dtmf": false}})
	d, addr := startSIPDaemon(t, telephoneModel(t)+fmt.Sprintf(sipInbandConfig, off))
	key := createKey(t, d.DataDir, "acme")
	path, ref := clip(t, codecClip)
	speech, err := dtmftest.Speech(t.Context(), path, 8000, false)
	if err != nil {
		t.Fatal(err)
	}
	mixed := append([]int16(nil), speech...)
	placed := dtmftest.Sequence(mixed, 8000, inbandKeys, dtmftest.Spec{Samples: 800, Low: -7, High: -5}, 12000, 16000)
	wav := filepath.Join(t.TempDir(), "keys8k.wav")
	writeWAV8k(t, wav, mixed)

	for _, c := range []struct {
		user string
		on   bool
	}{{"inband", true}, {"plain", false}} {
		t.Run(c.user, func(t *testing.T) {
			// The two calls at once: the record is the batch pass over
			// the recording, which the load does not change.
			t.Parallel()
			baresip(t, "sip:"+c.user+"@"+addr, "PCMU/8000/1", wav, 8000, 16*time.Second)
			job := liveJobByMetadata(t, d, key, "call", c.user, 60*time.Second)
			if job["status"] != "done" {
				t.Fatalf("job %v", job["status"])
			}
			rec := recordingPCM(t, d, key, job["id"].(string))
			// Where the WAV's first sample is in the recording: the
			// lag that best matches the speech before the first key.
			lag := align(speech[:placed[0].Start], rec, 8000)
			keys := recordKeys(t, job)
			t.Logf("%s: recording %d samples, lag %d; keys %+v", c.user, len(rec), lag, keys)
			if !c.on {
				if len(keys) != 0 {
					t.Errorf("%d dtmf messages with pci.inband_dtmf false", len(keys))
				}
			} else if len(keys) != len(placed) {
				t.Fatalf("%d in-band dtmf messages, want %d", len(keys), len(placed))
			}
			for i, p := range placed {
				at := p.Start + lag
				if at < 0 || at+p.Samples > len(rec) {
					t.Fatalf("key %d at %d (lag %d) is outside the recording of %d samples", i, p.Start, lag, len(rec))
				}
				lo, hi, _ := dtmf.Frequencies(p.Digit)
				span := rec[at : at+p.Samples]
				l, h := dtmftest.Level(span, 8000, lo), dtmftest.Level(span, 8000, hi)
				if !c.on {
					if min(l, h) < -12 {
						t.Errorf("key %d: tones at %.1f and %.1f dBm0 in the recording, want them kept (-7, -5)", i, l, h)
					}
					continue
				}
				if max(l, h) > -60 {
					t.Errorf("key %d: tones at %.1f and %.1f dBm0 in the recording, want none", i, l, h)
				}
				k := keys[i]
				want := float64(at) / 8000
				if k.Source != "inband" || !k.Masked || k.Digit != nil || math.Abs(k.Time-want) > 0.03 || math.Abs(k.Duration-0.1) > 0.03 {
					t.Errorf("key %d: %+v, want masked inband at %.3f s for 0.1 s", i, k, want)
				}
				// The speech around the tone is kept: at most 30 ms on
				// each side is silenced.
				for _, side := range [][2]int{{at - 800, at - 240}, {at + p.Samples + 240, at + p.Samples + 800}} {
					if quiet := silentRun(rec[side[0]:side[1]]); quiet > 0 {
						t.Errorf("key %d: %d samples of digital silence beside the tone", i, quiet)
					}
				}
			}
			if c.on {
				got := fullTranscript(job)
				wer := recognizertest.WER(ref, got)
				t.Logf("record WER %.3f %q", wer, got)
				if wer > werInband {
					t.Errorf("WER %.3f > %.3f", wer, werInband)
				}
			}
		})
	}
}

// writeWAV8k writes pcm as an 8 kHz mono 16-bit WAV file.
func writeWAV8k(t *testing.T, path string, pcm []int16) {
	t.Helper()
	f := media.Format{Encoding: media.LinearPCM, BitDepth: 16, SampleRate: 8000, Channels: 1}
	b := media.AppendWAVHeader(nil, f, int64(2*len(pcm)))
	for _, x := range pcm {
		b = binary.LittleEndian.AppendUint16(b, uint16(x))
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// recordingPCM is a call's stored mu-law recording, decoded.
func recordingPCM(t *testing.T, d *daemonProc, key, id string) []int16 {
	t.Helper()
	status, wav := d.do("GET", "/v2/live/"+id+"/file", key, nil, "", nil)
	if status != 200 || len(wav) < media.WAVHeaderSize || binary.LittleEndian.Uint16(wav[20:]) != 7 {
		t.Fatalf("GET file: %d, %d bytes, want a mu-law WAV", status, len(wav))
	}
	f := media.Format{Encoding: media.MuLaw, BitDepth: 8, SampleRate: 8000, Channels: 1}
	dec, err := media.DecodeInterleaved(f, wav[media.WAVHeaderSize:], nil)
	if err != nil {
		t.Fatal(err)
	}
	return media.ToInt16(dec[0], nil)
}

// align is the lag (in samples, up to a second either way) at which ref
// best matches rec (normalised correlation).
func align(ref, rec []int16, rate int) int {
	best, bestLag := -2.0, 0
	for lag := -rate; lag <= rate; lag++ {
		var xy, xx, yy float64
		for i, x := range ref {
			j := i + lag
			if j < 0 || j >= len(rec) {
				continue
			}
			y := float64(rec[j])
			xy += float64(x) * y
			xx += float64(x) * float64(x)
			yy += y * y
		}
		if xx > 0 && yy > 0 {
			if c := xy / math.Sqrt(xx*yy); c > best {
				best, bestLag = c, lag
			}
		}
	}
	return bestLag
}

// silentRun is the longest run of exact zeros in pcm past 8 samples (a
// removed tone's silence; speech has no such runs), else 0.
func silentRun(pcm []int16) int {
	run, longest := 0, 0
	for _, x := range pcm {
		if x == 0 {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	if longest <= 8 {
		return 0
	}
	return longest
}
