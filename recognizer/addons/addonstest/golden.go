package addonstest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// GoldenClips are the clips whose engine output is kept in testdata: the
// 66 s long-form LJ Speech clip, LJ001-0001..0006, a two-channel
// recording and five LibriSpeech sentences. TestGolden decodes them again with
// the real engine and fails when the stored output no longer matches;
// `go test ./recognizer/addons/addonstest -update` rewrites them.
var GoldenClips = []string{
	"ljspeech-LJ001-0007-to-0016-long.wav",
	"ljspeech-LJ001-0001.wav",
	"ljspeech-LJ001-0002.wav",
	"ljspeech-LJ001-0003.wav",
	"ljspeech-LJ001-0004.wav",
	"ljspeech-LJ001-0005.wav",
	"ljspeech-LJ001-0006.wav",
	"stereo-two-speaker-librispeech.wav",
	"ls-dev-clean-2412-153948-0000.wav",
	"ls-test-clean-1089-134686-0000.wav",
	"ls-test-clean-1089-134686-0001.wav",
	"ls-test-clean-1995-1837-0001.wav",
	"ls-test-clean-1089-134691-0001.wav",
}

// Load returns the stored engine output of a clip in GoldenClips (see
// TestGolden for how it is kept true), so that add-on tests run on real
// recogniser output without decoding the audio again in every package.
func Load(t testing.TB, clip string) Transcript {
	t.Helper()
	b, err := os.ReadFile(goldenPath(clip))
	if err != nil {
		t.Fatalf("addonstest: %v", err)
	}
	var utts []recognizer.Utterance
	if err := json.Unmarshal(b, &utts); err != nil {
		t.Fatalf("addonstest: %s: %v", clip, err)
	}
	for _, c := range recognizertest.Manifest(t) {
		if c.File == clip {
			return Transcript{Clip: c, Utterances: utts}
		}
	}
	t.Fatalf("addonstest: clip %s not in manifest", clip)
	return Transcript{}
}

// goldenPath locates testdata beside this source file, so Load works from
// any package's test directory.
func goldenPath(clip string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata", clip+".json")
}

// writeGolden stores utts as the golden output of clip.
func writeGolden(clip string, utts []recognizer.Utterance) error {
	b, err := json.MarshalIndent(utts, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(goldenPath(clip)), 0o755); err != nil {
		return err
	}
	return os.WriteFile(goldenPath(clip), append(b, '\n'), 0o644)
}
