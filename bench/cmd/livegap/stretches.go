package main

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
	"github.com/earshot-dev/earshot/recognizer/sphinx"
	"github.com/earshot-dev/earshot/transcript"
)

// Diagnosis of the record's choice (issue 41): with LIVEGAP_STRETCHES set
// to a file, every clip's stretches (pipeline.Stretches) are appended to
// it as one JSON line: each pass's words (normalised as the WER counts
// them) and, where the passes differ, each sequence's score on the
// stretch's audio at the language weights scoreWeights
// (sphinx.Stream.Scores), so decision rules can be compared offline on
// one run.

// scoreWeights are the n-gram weights the stretches are scored at: the
// decoder's -lw (0), and the batch search's later passes' -fwdflatlw and
// -bestpathlw.
var scoreWeights = []float64{0, 8.5, 9.5}

type stretchLine struct {
	Rend, Clip string
	Ref        []string
	Stretches  []stretchRow
}

type stretchRow struct {
	Batch, Live []string
	Frames      int
	// BatchConf and LiveConf are the mean word confidence of each pass's
	// words (0 without words).
	BatchConf, LiveConf float64
	// Scores[k] are the batch and the live words' scores at
	// scoreWeights[k]; empty when the passes agree or one has no words.
	Scores [][2]int  `json:",omitempty"`
	OK     [][2]bool `json:",omitempty"`
	// Regions are the words of regionChoice (normalised), RegionsLive
	// how many of its regions were the live words'.
	Regions     []string `json:",omitempty"`
	RegionsLive int      `json:",omitempty"`
}

var stretchMu sync.Mutex

// dumpStretches appends clip's stretch line to LIVEGAP_STRETCHES (no-op
// when unset).
func dumpStretches(st *sphinx.Stream, rend string, c clip, pcm []int16, live, batch []transcript.Utterance) error {
	path := os.Getenv("LIVEGAP_STRETCHES")
	if path == "" {
		return nil
	}
	line := stretchLine{Rend: rend, Clip: c.name, Ref: recognizertest.Normalize(c.transcript)}
	for _, s := range pipeline.Stretches(live, batch) {
		row := stretchRow{
			Batch: recognizertest.Normalize(pipeline.JoinUtterances(s.Batch)),
			Live:  recognizertest.Normalize(pipeline.JoinUtterances(s.Live)),
		}
		a := min(max(int((s.Start-0.2)*recognizer.SampleRate), 0), len(pcm))
		b := min(max(int((s.End+0.2)*recognizer.SampleRate), a), len(pcm))
		row.Frames = (b - a) / 160
		row.BatchConf, row.LiveConf = meanConfidence(s.Batch), meanConfidence(s.Live)
		bw, lw := pipeline.Words(s.Batch), pipeline.Words(s.Live)
		if !slices.Equal(bw, lw) && len(bw) > 0 && len(lw) > 0 {
			for _, w := range scoreWeights {
				sc, err := st.Scores(pcm[a:b], [][]string{bw, lw}, w)
				if err != nil {
					return err
				}
				row.Scores = append(row.Scores, [2]int{sc[0].Score, sc[1].Score})
				row.OK = append(row.OK, [2]bool{sc[0].OK, sc[1].OK})
			}
			rw, n, err := regionChoice(st, pcm, timedWords(s.Batch), timedWords(s.Live))
			if err != nil {
				return err
			}
			row.Regions, row.RegionsLive = recognizertest.Normalize(strings.Join(rw, " ")), n
		}
		line.Stretches = append(line.Stretches, row)
	}
	b, err := json.Marshal(line)
	if err != nil {
		return err
	}
	stretchMu.Lock()
	defer stretchMu.Unlock()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Write(append(b, '\n'))
	return err
}

// meanConfidence is the mean confidence of the utterances' words.
func meanConfidence(us []transcript.Utterance) float64 {
	var sum float64
	var n int
	for _, u := range us {
		for _, w := range u.Words {
			sum += w.Confidence
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// timedWord is a word of a pass with its file times.
type timedWord struct {
	w          string
	start, end float64
}

func timedWords(us []transcript.Utterance) []timedWord {
	var out []timedWord
	for _, u := range us {
		for _, w := range u.Words {
			if s := strings.ToLower(strings.TrimSpace(w.Word)); s != "" {
				out = append(out, timedWord{s, w.Start, w.End})
			}
		}
	}
	return out
}

// alignOps aligns a and b by their words (recognizertest.Align).
func alignOps(a, b []timedWord) [][2]int {
	words := func(ts []timedWord) []string {
		out := make([]string, len(ts))
		for i, t := range ts {
			out[i] = t.w
		}
		return out
	}
	return recognizertest.Align(words(a), words(b))
}

// regionChoice is the batch words with each region where the passes
// differ replaced by the live words where the scorer prefers them, each
// region scored on its own with the agreed word on either side as
// context; and how many regions were the live words'.
func regionChoice(st *sphinx.Stream, pcm []int16, b, l []timedWord) ([]string, int, error) {
	ops := alignOps(b, l)
	same := func(k int) bool { return ops[k][0] >= 0 && ops[k][1] >= 0 && b[ops[k][0]].w == l[ops[k][1]].w }
	var out []string
	fromLive := 0
	for k := 0; k < len(ops); {
		if same(k) {
			out = append(out, b[ops[k][0]].w)
			k++
			continue
		}
		e := k
		for e < len(ops) && !same(e) {
			e++
		}
		var bw, lw []string
		start, end := 1e9, -1.0
		for _, op := range ops[k:e] {
			if op[0] >= 0 {
				bw = append(bw, b[op[0]].w)
				start, end = min(start, b[op[0]].start), max(end, b[op[0]].end)
			}
			if op[1] >= 0 {
				lw = append(lw, l[op[1]].w)
				start, end = min(start, l[op[1]].start), max(end, l[op[1]].end)
			}
		}
		var left, right []string
		if k > 0 {
			p := ops[k-1]
			left = []string{b[p[0]].w}
			start = min(start, b[p[0]].start, l[p[1]].start)
		}
		if e < len(ops) {
			p := ops[e]
			right = []string{b[p[0]].w}
			end = max(end, b[p[0]].end, l[p[1]].end)
		}
		alts := [][]string{slices.Concat(left, bw, right), slices.Concat(left, lw, right)}
		choice := 0
		if len(alts[0]) > 0 && len(alts[1]) > 0 {
			x := min(max(int((start-0.1)*recognizer.SampleRate), 0), len(pcm))
			y := min(max(int((end+0.1)*recognizer.SampleRate), x), len(pcm))
			i, err := st.Choose(pcm[x:y], alts)
			if err != nil && !errors.Is(err, sphinx.ErrNoChoice) {
				return nil, 0, err
			}
			if err == nil {
				choice = i
			}
		}
		if choice == 1 {
			out = append(out, lw...)
			fromLive++
		} else {
			out = append(out, bw...)
		}
		k = e
	}
	return out, fromLive, nil
}
