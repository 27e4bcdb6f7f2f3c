package remote

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

func TestAppendWAV(t *testing.T) {
	for _, pcm := range [][]int16{nil, {0}, {math.MinInt16, -1, 0, 1, math.MaxInt16}} {
		b := appendWAV([]byte("prefix"), pcm)
		if string(b[:6]) != "prefix" || len(b) != 6+wavHeaderSize+2*len(pcm) {
			t.Fatalf("%d samples: %d bytes", len(pcm), len(b))
		}
		ch, err := recognizertest.DecodeWAV16(bytes.NewReader(b[6:]))
		if err != nil {
			t.Fatal(err)
		}
		if len(ch) != 1 || !slices.Equal(ch[0], pcm) && len(pcm) > 0 {
			t.Errorf("round trip of %v: %v", pcm, ch)
		}
	}
}
