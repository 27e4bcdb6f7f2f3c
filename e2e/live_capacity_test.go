package e2e

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// widebandSessionsConfig makes a session that finds no free decoder give
// up soon (decoder_wait), so that sessions past the wideband pool's size
// show as error messages at once; startDaemon's --decoders 2 sizes the
// wideband pools (the batch pool 2, the live pool 4 x 2 by default).
const widebandSessionsConfig = `
live:
  decoder_wait: 200ms
`

// maxConcurrentWideWER bounds the WER of each session's finals in
// TestWidebandSessionsAtOnce: ls-test-clean-1089-134686-0000.wav (28
// words) streamed at real time, four sessions at once. Measured
// 2026-11-28: 5 errors (17.9 %) in every session, as one session alone
// gets; the bound adds 3 words of margin for runs on a busier box. Before
// the live pool, the third and fourth sessions got no final at all.
const maxConcurrentWideWER = 0.29

// TestWidebandSessionsAtOnce: four 16 kHz WebSocket sessions talking at
// the same time on a daemon with --decoders 2 each get all their finals,
// with no error message. Before 2026-11-28, wideband live streams decoded
// on the wideband batch pool (sphinx.decoders, one per CPU), so only two
// sessions could talk at once: the others waited for a decoder and lost
// their utterances ("service at capacity"), and on a default 2-CPU box a
// third G.722 call or browser session did the same (livebench, 4
// sessions on the defaults: 9 error messages, p95 4.8 s). They now decode
// on the wideband live pool (sphinx.live_decoders, 4 per batch decoder).
func TestWidebandSessionsAtOnce(t *testing.T) {
	d := startDaemon(t, "", widebandSessionsConfig)
	key := createKey(t, d.DataDir, "acme")
	path, ref := clip(t, "ls-test-clean-1089-134686-0000.wav")
	audio := pcmOf(t, path)
	const sessions = 4
	views := make([]liveView, sessions)
	codes := make([]int, sessions)
	var wg sync.WaitGroup
	for i := range sessions {
		s := d.createLive(key, map[string]any{})
		wg.Go(func() {
			msgs, code := runSession(t, s.URL, audio, 32, 100*time.Millisecond)
			views[i], codes[i] = viewLive(t, msgs), code
		})
	}
	wg.Wait()
	rw := recognizertest.Normalize(ref)
	for i, v := range views {
		var texts []string
		for _, f := range v.finals {
			texts = append(texts, f.Text)
		}
		hyp := strings.Join(texts, " ")
		wer := float64(recognizertest.EditDistance(rw, recognizertest.Normalize(hyp))) / float64(len(rw))
		t.Logf("session %d: close %d, %d finals, WER %.3f: %q; errors %q", i, codes[i], len(v.finals), wer, hyp, v.errors)
		if codes[i] != 1000 || len(v.errors) > 0 {
			t.Errorf("session %d: close code %d, error messages %q; want 1000 and none", i, codes[i], v.errors)
		}
		if wer > maxConcurrentWideWER {
			t.Errorf("session %d: WER %.3f of its finals over %.2f", i, wer, maxConcurrentWideWER)
		}
	}
}
