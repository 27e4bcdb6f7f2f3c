package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/earshot-dev/earshot/bench/internal/psbatch"
	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// stock runs Debian's stock model in pocketsphinx_batch too (-stock): the
// reference of issue 14's targets (telephone-band WER at most 0.7x
// stock's on the same rendition, wideband batch no worse than stock's).
var stock bool

// stockRow is one rendition's batch WER against stock's.
type stockRow struct {
	rend            string
	stockWER, batch float64
}

// stockWER decodes the clips (each rendition's 16 kHz samples, as earshot's
// batch path gets them) with the stock model in pocketsphinx_batch, in
// workers processes at once, and returns its WER in percent.
func stockWER(clips []clip, workers int) (float64, error) {
	hyps := make([]string, len(clips))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			var idx []int
			var pcms [][]int16
			for i := w; i < len(clips); i += workers {
				idx = append(idx, i)
				pcms = append(pcms, clips[i].pcm)
			}
			if len(pcms) == 0 {
				return
			}
			hs, _, err := psbatch.RunPCM(context.Background(), psbatch.DefaultModel(), pcms)
			if err != nil {
				errs[w] = err
				return
			}
			for k, i := range idx {
				hyps[i] = hs[k]
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return 0, err
		}
	}
	var e, words int
	for i, c := range clips {
		ref := recognizertest.Normalize(c.transcript)
		e += recognizertest.EditDistance(ref, recognizertest.Normalize(hyps[i]))
		words += len(ref)
	}
	return 100 * float64(e) / float64(max(words, 1)), nil
}

// printStock prints the batch path's WER against stock's, per rendition.
func printStock(rows []stockRow) {
	if len(rows) == 0 {
		return
	}
	fmt.Println("\n| rendition | stock pocketsphinx_batch WER % | earshot batch WER % | earshot / stock |")
	fmt.Println("|---|---|---|---|")
	for _, r := range rows {
		fmt.Printf("| %s | %.2f | %.2f | %.2fx |\n", r.rend, r.stockWER, r.batch, r.batch/r.stockWER)
	}
}
