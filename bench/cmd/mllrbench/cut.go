package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/earshot-dev/earshot/recognizer/sphinx/telmodel"
)

// segment is a stretch of an utterance adapted on, with its transcript.
type segment struct{ id, text string }

// minRun is the fewest consecutive confident words a segment holds.
const minRun = 2

// pad is the audio kept on either side of a segment's words (seconds).
const pad = 0.05

// cut writes to dir, as 16 kHz WAVs, the runs of at least minRun
// consecutive words of the first pass whose posterior is at least
// o.minConf, and returns them with their words as transcripts.
func (t *toolbox) cut(dir string, us []utt, first decoded) ([]segment, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var segs []segment
	for _, u := range us {
		ws := first.words[u.id]
		var runs [][]word
		var cur []word
		for _, w := range ws {
			if w.post >= t.o.minConf {
				cur = append(cur, w)
				continue
			}
			if len(cur) >= minRun {
				runs = append(runs, cur)
			}
			cur = nil
		}
		if len(cur) >= minRun {
			runs = append(runs, cur)
		}
		if len(runs) == 0 {
			continue
		}
		b, err := os.ReadFile(filepath.Join(t.o.scratch, "wav", u.id+".wav"))
		if err != nil {
			return nil, err
		}
		if len(b) < 44 {
			return nil, fmt.Errorf("%s: short WAV", u.id)
		}
		pcm := make([]int16, (len(b)-44)/2)
		for i := range pcm {
			pcm[i] = int16(uint16(b[44+2*i]) | uint16(b[45+2*i])<<8)
		}
		for k, r := range runs {
			from := max(0, int((r[0].start-pad)*16000))
			to := min(len(pcm), int((r[len(r)-1].end+pad)*16000))
			if to <= from {
				continue
			}
			id := fmt.Sprintf("%s-c%d", u.id, k)
			if err := os.WriteFile(filepath.Join(dir, id+".wav"), telmodel.PCMWAV(pcm[from:to], 16000), 0o644); err != nil {
				return nil, err
			}
			texts := make([]string, len(r))
			for i, w := range r {
				texts[i] = w.text
			}
			segs = append(segs, segment{id, strings.Join(texts, " ")})
		}
	}
	return segs, nil
}
