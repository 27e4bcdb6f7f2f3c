package sphinx

/*
#cgo pkg-config: pocketsphinx sphinxbase
#include <stdlib.h>
#include <pocketsphinx.h>
#include <sphinxbase/fsg_model.h>
#include <sphinxbase/ngram_model.h>

// es_choose_search makes the finite-state search named name whose paths
// are the word sequences in words: nalt sequences, the i-th lens[i] words
// long (0: silence and fillers only), one after another in words. Each sequence is a chain
// of states of its own from the start state to the final one, each word's
// transition weighted by the n-gram language model of the active search
// (its probability given up to two words before it in its sequence, the
// sequence starting at <s>, times the search's lw; </s> on the way to the
// final state), and makes it the active search. With only >= 0, only the
// only-th sequence's chain reaches the final state: the others are
// searched all the same (their HMMs active, their senones scored) but end
// nowhere, so the best path is that sequence's, scored as in the search
// of all (es_choose_search's callers: Scores). Silence and fillers
// between words are the finite-state search's own (-fsgusefiller). The
// active search's name is written to prev (to go back to). Returns 0, or
// the negative step that failed.
static int es_choose_search(ps_decoder_t *ps, const char *name, char **words, const int *lens, int nalt, int only, float lw, const char **prev) {
	const char *cur = ps_get_search(ps);
	if (cur == NULL)
		return -1;
	*prev = cur;
	ngram_model_t *lm = ps_get_lm(ps, cur);
	if (lm == NULL)
		return -2;
	int total = 0;
	for (int a = 0; a < nalt; a++)
		total += lens[a];
	fsg_model_t *fsg = fsg_model_init(name, ps_get_logmath(ps), lw, total + 2);
	if (fsg == NULL)
		return -3;
	fsg->start_state = 0;
	fsg->final_state = 1;
	int32 next = 2, nused = 0;
	for (int a = 0; a < nalt; a++) {
		int32 hist[2] = {ngram_wid(lm, "<s>"), -1};
		int32 nhist = 1, from = 0;
		for (int j = 0; j < lens[a]; j++, words++) {
			int32 lwid = ngram_wid(lm, *words);
			int32 p = ngram_ng_prob(lm, lwid, hist, nhist, &nused);
			int32 wid = fsg_model_word_add(fsg, *words);
			fsg_model_trans_add(fsg, from, next, (int32)(lw * p), wid);
			from = next++;
			hist[1] = hist[0];
			hist[0] = lwid;
			nhist = 2;
		}
		if (only >= 0 && a != only)
			continue;
		int32 p = ngram_ng_prob(lm, ngram_wid(lm, "</s>"), hist, nhist, &nused);
		fsg_model_null_trans_add(fsg, from, 1, (int32)(lw * p));
	}
	fsg_model_null_trans_closure(fsg, NULL);
	// The search's beams as wide as the log base allows: on a sequence's
	// chain the only competitors are the fillers between its words, which
	// pay no n-gram cost, so at the decoder's beams a word the n-gram finds
	// unlikely in its place (a live final's "turnips" after "for dinner")
	// was pruned at its entry and the sequence had no path at all.
	cmd_ln_t *cfg = ps_get_config(ps);
	double beam = cmd_ln_float64_r(cfg, "-beam"), wbeam = cmd_ln_float64_r(cfg, "-wbeam"),
		pbeam = cmd_ln_float64_r(cfg, "-pbeam");
	// And no lattice: the best path is the Viterbi search's own (its
	// backtrace and score). With these beams every word end of every
	// frame is kept, and 5prealpha's lattice of them (-bestpath) costs
	// the square of their number (each entry looks its node up in a list
	// of all): on long stretches more than the search.
	int bestpath = cmd_ln_boolean_r(cfg, "-bestpath");
	cmd_ln_set_float64_r(cfg, "-beam", 1e-300);
	cmd_ln_set_float64_r(cfg, "-wbeam", 1e-300);
	cmd_ln_set_float64_r(cfg, "-pbeam", 1e-300);
	cmd_ln_set_boolean_r(cfg, "-bestpath", FALSE);
	int rv = ps_set_fsg(ps, name, fsg);
	cmd_ln_set_float64_r(cfg, "-beam", beam);
	cmd_ln_set_float64_r(cfg, "-wbeam", wbeam);
	cmd_ln_set_float64_r(cfg, "-pbeam", pbeam);
	cmd_ln_set_boolean_r(cfg, "-bestpath", bestpath);
	fsg_model_free(fsg); // the search holds its own reference
	if (rv < 0)
		return -4;
	if (ps_set_search(ps, name) < 0)
		return -5;
	return 0;
}

// es_set_maxhmmpf sets the decoder's -maxhmmpf, which a finite-state
// search reads at every frame (its beams narrow while more HMMs are
// active), and returns the value it had.
static int es_set_maxhmmpf(ps_decoder_t *ps, int v) {
	cmd_ln_t *cfg = ps_get_config(ps);
	int old = cmd_ln_int32_r(cfg, "-maxhmmpf");
	cmd_ln_set_int32_r(cfg, "-maxhmmpf", v);
	return old;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"github.com/earshot-dev/earshot/recognizer"
)

// chooseSearch names the decoder's search of Choose.
const chooseSearch = "earshot_choose"

// ErrNoChoice is Choose's error when the search reached the end of the
// audio through none of the alternatives (each was pruned away).
var ErrNoChoice = errors.New("sphinx: no alternative survived the search")

// Choose decodes pcm (16 kHz mono, one stretch of speech) against the given
// word sequences only and returns the index of the one the search prefers:
// the decoder's acoustic model and its n-gram language model, weighted as
// the decoder's own search weighs them (-lw, -wip), score every
// alternative the same way, so the choice does not depend on which search
// proposed it; the search's beams are as wide as the log base allows
// (es_choose_search), so a sequence is not pruned for an unlikely word
// nor for another sequence's sake.
// Cepstra are normalised over pcm as Decode does. An empty
// alternative stands for no words; 5prealpha reports no path of fillers
// only, so it is never chosen (ErrNoChoice when no other alternative
// has a path). Words the dictionary does not hold
// make it fail (ErrDecode). It leaves the stream as it found it, ready
// for Decode, Write or another Choose.
func (s *Stream) Choose(pcm []int16, alternatives [][]string) (int, error) {
	if s.d == nil {
		return -1, errClosedStream
	}
	if len(alternatives) == 0 {
		return -1, fmt.Errorf("%w: choose among no alternatives", ErrDecode)
	}
	if len(pcm) == 0 {
		return -1, ErrNoChoice
	}
	s.pending, s.err = s.pending[:0], nil
	s.d.reset()
	// Not a live decode (the CPU policy's live bound is not taken): a
	// whole-recording stream's work, as Decode.
	return s.d.choose(pcm, alternatives)
}

// choose is Choose on the decoder: one search whose paths are the
// alternatives with words, each a chain of its own, so a frame's acoustic
// scores are computed once for all of them (they were a search each: the
// Gaussians, most of a choice's CPU, computed once per alternative). With
// beams as wide as the log base allows and no cap on the active HMMs, no
// alternative is pruned for another's sake, and the search's best path is
// the alternative that scores best (Scores; the first of equal sequences,
// between different sequences of equal scores the search picks one). All
// are scored on one scale: PocketSphinx scores a frame's senones against
// the best of those active in the search, so a sequence searched on its
// own (until 2026-11-29) was scored on a scale of its own, and on some
// stretches the other sequence won (bench/CALLS.md 2026-11-30 "The
// record's one search chooses otherwise").
func (d *decoder) choose(pcm []int16, alternatives [][]string) (int, error) {
	paths, err := d.wordPaths(alternatives) // no words: never chosen (Choose)
	if err != nil {
		return -1, err
	}
	if len(paths) == 0 {
		return -1, ErrNoChoice
	}
	hyp, _, ok, err := d.searchPaths(pcm, paths, -1, d.lw())
	if err != nil {
		return -1, err
	}
	if ok {
		for i, alt := range alternatives {
			if len(alt) > 0 && slices.Equal(hyp, alt) {
				return i, nil
			}
		}
	}
	return -1, ErrNoChoice
}

// wordPaths returns the alternatives that have words, in order: the
// paths of the choice search (es_choose_search); ErrDecode when a word is
// not in the dictionary.
func (d *decoder) wordPaths(alternatives [][]string) ([][]string, error) {
	var paths [][]string
	for _, alt := range alternatives {
		for _, w := range alt {
			if !d.knows(w) {
				return nil, fmt.Errorf("%w: %q not in the dictionary", ErrDecode, w)
			}
		}
		if len(alt) > 0 {
			paths = append(paths, alt)
		}
	}
	return paths, nil
}

// PathScore is one word sequence's score on a stretch of audio (Scores).
type PathScore struct {
	// Score is the path's log probability in the decoder's log base:
	// acoustic plus the n-gram's, weighted as asked.
	Score int
	// OK is false when no path reached the end (Score is then 0).
	OK bool
}

// Scores is Choose's scoring with the n-gram weighted at lw instead of
// the decoder's -lw (0: -lw): each alternative's score on pcm as Choose's
// search scores it, for diagnosis (bench/cmd/livegap -record). Each
// alternative with words is scored in a search of all of them in which
// only its chain reaches the final state (es_choose_search's only), so
// the scores compare as Choose compares them: PocketSphinx scores a
// frame's senones against the best of those the search has active, so a
// search of one sequence alone scores it on a scale of its own (on
// ls-test-clean-1089-134686-0001, the decoder's words 316 above the
// same with the reference's "you" alone, 228 below in one search; with every senone scored,
// -compallsen, the same ranking as the one search). The stream is left as
// Choose leaves it.
func (s *Stream) Scores(pcm []int16, alternatives [][]string, lw float64) ([]PathScore, error) {
	if s.d == nil {
		return nil, errClosedStream
	}
	s.pending, s.err = s.pending[:0], nil
	s.d.reset()
	if lw == 0 {
		lw = s.d.lw()
	}
	paths, err := s.d.wordPaths(alternatives)
	if err != nil {
		return nil, err
	}
	out := make([]PathScore, len(alternatives))
	if len(pcm) == 0 {
		return out, nil
	}
	k := 0 // alternatives[i]'s index in paths
	for i, alt := range alternatives {
		if len(alt) == 0 { // silence and fillers only, on its own
			out[i], err = s.d.scorePath(pcm, [][]string{alt}, 0, lw)
		} else {
			out[i], err = s.d.scorePath(pcm, paths, k, lw)
			k++
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// scorePath decodes pcm as one utterance on the search of paths in which
// only paths[only] reaches the final state, and returns that path's score
// (acoustic plus the language model weighted at lw, in the decoder's log
// base); not OK when it did not reach the end.
func (d *decoder) scorePath(pcm []int16, paths [][]string, only int, lw float64) (PathScore, error) {
	hyp, score, ok, err := d.searchPaths(pcm, paths, only, lw)
	if err != nil || !ok || !slices.Equal(hyp, paths[only]) {
		return PathScore{}, err // the search ended short of the final state
	}
	return PathScore{score, true}, nil
}

// searchPaths decodes pcm as one utterance on the search whose paths are
// the word sequences paths, only paths[only] reaching the final state when
// only >= 0 (es_choose_search), and returns its best path's words and
// score; false when no path reached the end. The search runs
// without the decoder's -maxhmmpf (which would narrow its beams); the
// decoder goes back to its own search and cap.
func (d *decoder) searchPaths(pcm []int16, paths [][]string, only int, lw float64) ([]string, int, bool, error) {
	n := 0
	lens := make([]C.int, len(paths))
	for i, p := range paths {
		lens[i] = C.int(len(p))
		n += len(p)
	}
	cw := make([]*C.char, 0, n+1) // one more: never empty
	for _, p := range paths {
		for _, w := range p {
			cw = append(cw, C.CString(w))
		}
	}
	cw = append(cw, nil)
	defer func() {
		for _, w := range cw {
			C.free(unsafe.Pointer(w))
		}
	}()
	name := C.CString(chooseSearch)
	defer C.free(unsafe.Pointer(name))
	var prev *C.char
	// prev points into the decoder's search table: the active search
	// lives on (ps_set_fsg adds one of another name).
	if rv := C.es_choose_search(d.ps, name, &cw[0], &lens[0], C.int(len(paths)), C.int(only), C.float(lw), &prev); rv < 0 {
		if prev != nil {
			C.ps_set_search(d.ps, prev)
		}
		return nil, 0, false, fmt.Errorf("%w: choose search (step %d)", ErrDecode, -int(rv))
	}
	back := C.GoString(prev)
	defer d.setSearch(back)
	maxHMMs := C.es_set_maxhmmpf(d.ps, -1)
	defer C.es_set_maxhmmpf(d.ps, maxHMMs)
	if err := d.start(); err != nil {
		return nil, 0, false, err
	}
	if err := d.process(pcm, true); err != nil {
		d.reset()
		return nil, 0, false, err
	}
	d.inUtt = false
	if C.ps_end_utt(d.ps) < 0 {
		return nil, 0, false, fmt.Errorf("%w: end utterance", ErrDecode)
	}
	var score C.int32
	h := C.ps_get_hyp(d.ps, &score)
	if h == nil {
		// No path: no score. (Taken for a path of no words scoring 0, it
		// beat every real path, scores being log probabilities; 5prealpha
		// reports no path of fillers only.)
		return nil, 0, false, nil
	}
	return cleanHyp(C.GoString(h)), int(score), true, nil
}

var _ recognizer.Chooser = (*Stream)(nil)
