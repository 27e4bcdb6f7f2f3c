package sphinx

/*
#cgo pkg-config: pocketsphinx sphinxbase
#include <stdlib.h>
#include <pocketsphinx.h>
#include <sphinxbase/fsg_model.h>
#include <sphinxbase/ngram_model.h>

// es_choose_search makes the finite-state search named name whose paths
// are the nalts word sequences in words (sequence a is the lens[a] words
// after those of the sequences before it; 0 words is silence and fillers
// only), each from the start state to the final one on a branch of its
// own, each word's transition weighted by the n-gram language model of
// the active search (its probability given up to two words before it,
// the sequence starting at <s>, times the search's -lw; </s> on the way
// to the final state), and makes it the active search. Silence and
// fillers between words are the finite-state search's own
// (-fsgusefiller). The active search's name is written to prev (to go
// back to). Returns 0, or the negative step that failed.
static int es_choose_search(ps_decoder_t *ps, const char *name, char **words, int *lens, int nalts, const char **prev) {
	const char *cur = ps_get_search(ps);
	if (cur == NULL)
		return -1;
	*prev = cur;
	ngram_model_t *lm = ps_get_lm(ps, cur);
	if (lm == NULL)
		return -2;
	int total = 0;
	for (int a = 0; a < nalts; a++)
		total += lens[a];
	float lw = cmd_ln_float32_r(ps_get_config(ps), "-lw");
	fsg_model_t *fsg = fsg_model_init(name, ps_get_logmath(ps), lw, total + 2);
	if (fsg == NULL)
		return -3;
	fsg->start_state = 0;
	fsg->final_state = 1;
	int32 next = 2, w = 0;
	for (int a = 0; a < nalts; a++) {
		int32 hist[2] = {ngram_wid(lm, "<s>"), -1};
		int32 nhist = 1, nused = 0, from = 0;
		for (int j = 0; j < lens[a]; j++, w++) {
			int32 lwid = ngram_wid(lm, words[w]);
			int32 p = ngram_ng_prob(lm, lwid, hist, nhist, &nused);
			int32 wid = fsg_model_word_add(fsg, words[w]);
			fsg_model_trans_add(fsg, from, next, (int32)(lw * p), wid);
			from = next++;
			hist[1] = hist[0];
			hist[0] = lwid;
			nhist = 2;
		}
		int32 p = ngram_ng_prob(lm, ngram_wid(lm, "</s>"), hist, nhist, &nused);
		fsg_model_null_trans_add(fsg, from, 1, (int32)(lw * p));
	}
	fsg_model_null_trans_closure(fsg, NULL);
	int rv = ps_set_fsg(ps, name, fsg);
	fsg_model_free(fsg); // the search holds its own reference
	if (rv < 0)
		return -4;
	if (ps_set_search(ps, name) < 0)
		return -5;
	return 0;
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
// proposed it. Cepstra are normalised over pcm as Decode does. An empty
// alternative stands for no words; 5prealpha reports no path of fillers
// only, so it is never chosen (ErrNoChoice when it is the only one
// left). Words the dictionary does not hold
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

// choose is Choose on the decoder. With a joint search (the default) the
// alternatives are the branches of one search over pcm, so the audio is
// scored once and the search's best path names the winner; when that path
// is none of them whole (it ended short of the final state), or without
// a joint search (Config.ChooseApart), each alternative is scored on its
// own (a search of that one path, so that no alternative is pruned for
// another's sake), and the best score wins (the first of equals).
func (d *decoder) choose(pcm []int16, alternatives [][]string) (int, error) {
	for _, alt := range alternatives {
		for _, w := range alt {
			if !d.knows(w) {
				return -1, fmt.Errorf("%w: %q not in the dictionary", ErrDecode, w)
			}
		}
	}
	if !d.chooseApart && len(alternatives) > 1 {
		hyp, _, ok, err := d.searchPaths(pcm, alternatives)
		if err != nil {
			return -1, err
		}
		if ok {
			if i := slices.IndexFunc(alternatives, func(a []string) bool { return slices.Equal(a, hyp) }); i >= 0 {
				return i, nil
			}
		}
	}
	best, bestScore := -1, 0
	for i, alt := range alternatives {
		hyp, score, ok, err := d.searchPaths(pcm, [][]string{alt})
		if err != nil {
			return -1, err
		}
		// A path short of the final state is not the alternative's.
		if ok && slices.Equal(hyp, alt) && (best < 0 || score > bestScore) {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		return -1, ErrNoChoice
	}
	return best, nil
}

// searchPaths decodes pcm as one utterance against the word sequences
// alts only (no words: silence and fillers only) and returns the words of
// the search's best path and its score (acoustic plus weighted language
// model, in the decoder's log base); false when the search has no path.
// The decoder goes back to its own search.
func (d *decoder) searchPaths(pcm []int16, alts [][]string) ([]string, int, bool, error) {
	var cw []*C.char
	lens := make([]C.int, len(alts))
	for a, alt := range alts {
		lens[a] = C.int(len(alt))
		for _, w := range alt {
			cw = append(cw, C.CString(w))
		}
	}
	cw = append(cw, nil) // never empty
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
	if rv := C.es_choose_search(d.ps, name, &cw[0], &lens[0], C.int(len(alts)), &prev); rv < 0 {
		if prev != nil {
			C.ps_set_search(d.ps, prev)
		}
		return nil, 0, false, fmt.Errorf("%w: choose search (step %d)", ErrDecode, -int(rv))
	}
	back := C.GoString(prev)
	defer d.setSearch(back)
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
		return nil, 0, false, nil
	}
	return cleanHyp(C.GoString(h)), int(score), true, nil
}

var _ recognizer.Chooser = (*Stream)(nil)
