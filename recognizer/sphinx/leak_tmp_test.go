package sphinx

import (
	"os"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
)

func rss() string {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS") {
			return l
		}
	}
	return ""
}

func TestLeakTmp(t *testing.T) {
	_, pcm := clip(t, "pocketsphinx-goforward.wav")
	for round := range 3 {
		e := newEngine(t, 1)
		for i := range 150 {
			st, _ := e.NewStream(t.Context(), recognizer.StreamOptions{})
			if i%2 == 0 {
				st.(*Stream).Decode(pcm)
			} else {
				writeChunks(t, st.(*Stream), pcm)
				st.Partial()
				st.Finish()
			}
			st.Close()
		}
		e.Close()
		t.Logf("round %d %s", round, rss())
	}
}
