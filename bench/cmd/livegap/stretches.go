package main

import (
	"encoding/json"
	"os"
	"slices"
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
