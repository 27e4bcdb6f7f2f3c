package e2e

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/ingest/dtmf"
	"github.com/earshot-dev/earshot/ingest/dtmf/dtmftest"
	zafg711 "github.com/zaf/g711"
)

// TestLiveInbandDTMF: a WebSocket session of 8 kHz mu-law that asks for
// pci.inband_dtmf finds two keys mixed into real speech (masked dtmf
// messages of source inband over the WebSocket) and stores silence over
// them; the same audio without the switch (the WebSocket's default) sends
// no key and stores the tones; a format the detector does not take is
// refused (422).
func TestLiveInbandDTMF(t *testing.T) {
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	path, _ := clip(t, "librivox-sense-and-sensibility-01-0870.wav")
	pcm, err := dtmftest.Speech(t.Context(), path, 8000, false)
	if err != nil {
		t.Fatal(err)
	}
	placed := dtmftest.Sequence(pcm, 8000, "#0", dtmftest.Spec{Samples: 800, Low: -7, High: -5}, 8000, 16000)
	audio := make([]byte, len(pcm))
	for i, x := range pcm {
		audio[i] = zafg711.EncodeUlawFrame(x)
	}
	format := map[string]any{"encoding": "wav/ulaw", "bit_depth": 8, "sample_rate": 8000}

	for _, on := range []bool{true, false} {
		body := map[string]any{"language_config": map[string]any{"languages": []string{"en"}}}
		for k, v := range format {
			body[k] = v
		}
		if on {
			body["pci"] = map[string]any{"inband_dtmf": true}
		}
		s := d.createLive(key, body)
		msgs, code := runSession(t, s.URL, audio, 8, 0)
		if code != 1000 {
			t.Fatalf("session closed %d", code)
		}
		var keys []dtmfKey
		for _, m := range msgs {
			if m.Type == "dtmf" {
				var k dtmfKey
				if err := json.Unmarshal(m.Data, &k); err != nil {
					t.Fatal(err)
				}
				keys = append(keys, k)
			}
		}
		job := d.waitLive(key, s.ID, time.Minute)
		rec := recordingPCM(t, d, key, job["id"].(string))
		if len(rec) != len(pcm) {
			t.Fatalf("inband_dtmf %v: recording of %d samples, %d sent", on, len(rec), len(pcm))
		}
		if !on {
			if len(keys) != 0 {
				t.Errorf("%d dtmf messages without pci.inband_dtmf", len(keys))
			}
		} else if len(keys) != len(placed) {
			t.Fatalf("%d dtmf messages, want %d: %+v", len(keys), len(placed), keys)
		}
		for i, p := range placed {
			lo, hi, _ := dtmf.Frequencies(p.Digit)
			span := rec[p.Start : p.Start+p.Samples]
			l, h := dtmftest.Level(span, 8000, lo), dtmftest.Level(span, 8000, hi)
			switch {
			case !on && min(l, h) < -12:
				t.Errorf("key %d: tones at %.1f and %.1f dBm0 stored without the switch, want them kept", i, l, h)
			case on && max(l, h) > -60:
				t.Errorf("key %d: tones at %.1f and %.1f dBm0 stored, want none", i, l, h)
			case on && (keys[i].Source != "inband" || !keys[i].Masked || keys[i].Digit != nil || keys[i].Time < float64(p.Start)/8000-0.02 || keys[i].Time > float64(p.Start)/8000+0.02):
				t.Errorf("key %d: %+v, want masked inband at %.3f s", i, keys[i], float64(p.Start)/8000)
			}
		}
	}

	body := map[string]any{"encoding": "wav/pcm", "bit_depth": 16, "sample_rate": 44100, "pci": map[string]any{"inband_dtmf": true}}
	if status, b := d.postJSON("/v2/live", key, body, nil); status != 422 {
		t.Errorf("inband_dtmf on 44.1 kHz audio: %d %s, want 422", status, b)
	}
}
