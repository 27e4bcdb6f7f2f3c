package recognizer_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
	"github.com/earshot-dev/earshot/recognizer/sphinx/telmodel"
)

// TestBandOf: every testdata clip at 16 kHz is wideband by its spectrum;
// its G.711 renditions are telephone-band by their 8 kHz rate and, decoded
// to 16 kHz, by their spectrum; so is a rendition re-encoded as a 44.1 kHz
// MP3 (a call recording uploaded as MP3). Silence is wideband.
func TestBandOf(t *testing.T) {
	ctx := t.Context()
	tmp := t.TempDir()
	for i, c := range recognizertest.Manifest(t) {
		p, err := media.Decode(ctx, c.Path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if b := recognizer.BandOf(p.Info.SampleRate, p.Channels); b.Narrowband || b.ByRate {
			t.Errorf("%s: %+v, want wideband by spectrum", c.File, b)
		}
		if len(p.Channels) != 1 {
			continue
		}
		law := telmodel.Laws[i%2]
		g := filepath.Join(tmp, "g711.wav")
		r, err := telmodel.Render(ctx, c.Path, g, law)
		if err != nil {
			t.Fatal(err)
		}
		if b := recognizer.BandOf(8000, [][]int16{r.PCM}); !b.Narrowband || !b.ByRate {
			t.Errorf("%s %s at 8 kHz: %+v, want narrowband by rate", c.File, law, b)
		}
		if b := recognizer.BandOf(16000, [][]int16{r.PCM}); !b.Narrowband {
			t.Errorf("%s %s at 16 kHz: %+v, want narrowband by spectrum", c.File, law, b)
		}
		if i%4 != 0 { // MP3 on a few clips: ffmpeg is slow
			continue
		}
		mp3 := filepath.Join(tmp, "call.mp3")
		os.Remove(mp3)
		if out, err := exec.CommandContext(ctx, "ffmpeg", "-loglevel", "error", "-i", g, "-ar", "44100", "-b:a", "64k", mp3).CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg: %v %s", err, out)
		}
		pm, err := media.Decode(ctx, mp3, nil)
		if err != nil {
			t.Fatal(err)
		}
		if b := recognizer.BandOf(pm.Info.SampleRate, pm.Channels); pm.Info.SampleRate != 44100 || !b.Narrowband || b.ByRate {
			t.Errorf("%s %s as 44.1 kHz MP3 (rate %d): %+v, want narrowband by spectrum", c.File, law, pm.Info.SampleRate, b)
		}
	}
	if b := recognizer.BandOf(16000, [][]int16{make([]int16, 16000)}); b.Narrowband {
		t.Errorf("silence: %+v, want wideband", b)
	}
	if b := recognizer.BandOf(16000, nil); b.Narrowband {
		t.Errorf("no audio: %+v, want wideband", b)
	}
}
