package sphinx

/*
#cgo pkg-config: pocketsphinx sphinxbase
#include <stdlib.h>
#include <malloc.h>
#include <pocketsphinx.h>
#include <sphinxbase/err.h>
#include <sphinxbase/ngram_model.h>

// Small wrappers keep struct access and macros on the C side.
static int es_frate(ps_decoder_t *ps) {
	return (int)cmd_ln_int_r(ps_get_config(ps), "-frate");
}
static long es_config_int(ps_decoder_t *ps, const char *name) {
	return cmd_ln_int_r(ps_get_config(ps), name);
}
static int32 es_seg_prob(ps_seg_t *seg) {
	return ps_seg_prob(seg, NULL, NULL, NULL);
}
// es_lm_search adds a search named name on the active search's language
// model, made with the second pass (-fwdflat) off when fwdflat is 0 (kept
// as the decoder's when -1) and at most maxhmmpf active HMMs per frame
// when maxhmmpf > 0; the decoder's config is restored and the model is
// shared (ps_set_lm retains it). Making a search sets the shared acoustic
// model up for it, so callers go back to their search with ps_set_search.
// Returns 0, or the negative step that failed (-1 no active search, -2 no
// model, -3 the search).
static int es_lm_search(ps_decoder_t *ps, const char *name, long fwdflat, long maxhmmpf) {
	const char *cur = ps_get_search(ps);
	if (cur == NULL)
		return -1;
	ngram_model_t *lm = ps_get_lm(ps, cur);
	if (lm == NULL)
		return -2;
	cmd_ln_t *cfg = ps_get_config(ps);
	long flat = cmd_ln_int_r(cfg, "-fwdflat");
	long hmmpf = cmd_ln_int_r(cfg, "-maxhmmpf");
	if (fwdflat >= 0)
		cmd_ln_set_int_r(cfg, "-fwdflat", fwdflat);
	if (maxhmmpf > 0)
		cmd_ln_set_int_r(cfg, "-maxhmmpf", maxhmmpf);
	int rv = ps_set_lm(ps, name, lm);
	cmd_ln_set_int_r(cfg, "-fwdflat", flat);
	cmd_ln_set_int_r(cfg, "-maxhmmpf", hmmpf);
	return rv < 0 ? -3 : 0;
}
// es_first_pass_search adds a search named name on the active search's
// language model with the second pass (-fwdflat) off and at most maxhmmpf
// active HMMs per frame when maxhmmpf > 0: the search a live stream that
// reads its words from the first pass (Stream.Path) decodes with, so that
// ending its utterance costs only the lattice pass (-bestpath, the
// decoder's: a best path through the first pass's word exits, no new
// search). restore is 0 on a decoder whose searches are all first pass
// only (see below). Returns 0, or the negative step that failed.
static int es_first_pass_search(ps_decoder_t *ps, const char *name, long maxhmmpf, int restore) {
	const char *cur = ps_get_search(ps);
	int rv = es_lm_search(ps, name, 0, maxhmmpf);
	if (rv < 0)
		return rv;
	if (!restore)
		return ps_set_search(ps, cur) < 0 ? -5 : 0;
	// Making a search sets the shared acoustic model up for that search:
	// a one-pass search stops it keeping the utterance's frames, which the
	// second pass of the active search rescans. Make a second search with
	// the decoder's own passes on the same model, so the acoustic model is
	// set up for them again, and go back to the active search untouched.
	if (es_lm_search(ps, "earshot_full_pass", -1, 0) < 0)
		return -4;
	if (ps_set_search(ps, cur) < 0)
		return -5;
	return 0;
}
// es_capped_search adds a search named name on the active search's
// language model with the decoder's own passes and at most maxhmmpf
// active HMMs per frame, and goes back to the active search: the
// search a live session's record decodes with (recordSearch). Its passes
// are the active search's, so the acoustic model stays set up for them.
// Returns 0, or the negative step that failed.
static int es_capped_search(ps_decoder_t *ps, const char *name, long maxhmmpf) {
	const char *cur = ps_get_search(ps);
	int rv = es_lm_search(ps, name, -1, maxhmmpf);
	if (rv < 0)
		return rv;
	return ps_set_search(ps, cur) < 0 ? -5 : 0;
}
static int32 es_seg_ascr(ps_seg_t *seg) {
	int32 ascr = 0, lscr = 0, lback = 0;
	ps_seg_prob(seg, &ascr, &lscr, &lback);
	return ascr;
}
static double es_exp(ps_decoder_t *ps, int32 p) {
	return logmath_exp(ps_get_logmath(ps), p);
}
static double es_lw(ps_decoder_t *ps) {
	return (double)cmd_ln_float32_r(ps_get_config(ps), "-lw");
}
// es_vocabulary_search makes an n-gram search named name whose language
// model interpolates the model of search base (weight 1-lambda) with the
// ARPA model at path (weight lambda), and activates it. Sets take their
// own references (ngram_model_set_init and ps_set_lm retain), so ours are
// dropped here. It returns 0, or the negative number of the failed step.
static int es_vocabulary_search(ps_decoder_t *ps, const char *base, const char *name,
		const char *path, float lambda) {
	ngram_model_t *def = ps_get_lm(ps, base);
	if (def == NULL)
		return -1;
	ngram_model_t *lm = ngram_model_set_lookup(def, NULL);
	if (lm == NULL)
		return -2;
	ngram_model_t *voc = ngram_model_read(ps_get_config(ps), path, NGRAM_ARPA, ps_get_logmath(ps));
	if (voc == NULL)
		return -3;
	ngram_model_t *models[2] = {lm, voc};
	char *names[2] = {"base", "vocabulary"};
	float32 weights[2] = {1 - lambda, lambda};
	ngram_model_t *set = ngram_model_set_init(ps_get_config(ps), models, names, weights, 2);
	ngram_model_free(voc);
	if (set == NULL)
		return -4;
	int rv = ps_set_lm(ps, name, set);
	ngram_model_free(set);
	if (rv < 0)
		return -5;
	if (ps_set_search(ps, name) < 0)
		return -6;
	return 0;
}
*/
import "C"

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"unsafe"

	"github.com/earshot-dev/earshot/recognizer"
)

// decoder owns one ps_decoder_t. It is not safe for concurrent use; the
// pool guarantees a single user at a time.
type decoder struct {
	ps      *C.ps_decoder_t
	frate   float64    // frames per second (-frate, 100)
	cmnType C.int      // CMN mode after init (feat.params: batch)
	cmnInit []C.mfcc_t // live CMN mean after init (-cmninit)
	primed  bool       // live CMN started by setCMNFrom, refreshed once a second of audio (refreshCMN)
	inUtt   bool       // between ps_start_utt and ps_end_utt
	// base is the search a stream starts on (PocketSphinx's default, or a
	// vocabulary's); firstPass is set while a stream decodes on the
	// first-pass-only search (firstPassSearch).
	base      string
	firstPass bool
	// hasFirstPass: the first-pass search was made (useFirstPass, on
	// first use; it costs about 28 MB, its own lexicon tree).
	hasFirstPass bool
	// firstPassOnly: every search of the decoder is first-pass only
	// (Config.FirstPassOnly), so useFirstPass has nothing to do.
	firstPassOnly bool
	// leanHMMs is the -maxhmmpf of the lean search of a first-pass-only
	// decoder (Config.leanMaxHMMs; 0: none), hasLean whether it was made
	// and lean whether the decoder is on it (useLean).
	leanHMMs      int
	hasLean, lean bool
	// recordHMMs is the -maxhmmpf of the record search of a full pool's
	// decoder (Config.recordMaxHMMs; 0: none), hasRecord whether it was
	// made and record whether the decoder is on it (useRecord).
	recordHMMs        int
	hasRecord, record bool
	nSamples          int // samples fed to the current utterance
	refreshed         int // nSamples at the last refreshCMN that refreshed
	// vocab is the key of the vocabulary applied to this decoder ("" for
	// none). A decoder with a vocabulary keeps it: its dictionary and
	// language model were changed, so it only serves streams with the same
	// vocabulary and is replaced by a fresh one otherwise.
	vocab string
	// carry restores between streams what an utterance leaves behind that
	// PocketSphinx does not reset (carryover.go).
	carry *carryOver
}

// silenceLogs turns off the C library's log output. The log stream is
// process-wide state inside sphinxbase, so this affects every decoder.
func silenceLogs() { C.err_set_logfp(nil) }

// newDecoder runs ps_init with the same arguments pocketsphinx_batch
// would get for -hmm/-lm/-dict, plus -remove_silence no: with PocketSphinx's
// own silence removal on, 5prealpha reports word frames on a timeline with
// the removed frames cut out, so word times would be wrong. dict is the
// dictionary's text (searchDictionary: cfg.Dict's words of the language
// model), read by ps_init from its in-memory file dictPath (dictFile,
// made with the pool), or from a temporary file for this load where there
// is none (dictPath ""); nil loads cfg.Dict itself.
func newDecoder(cfg Config, dict []byte, dictPath string) (*decoder, error) {
	switch {
	case dict == nil:
		dictPath = cfg.Dict
	case dictPath == "": // no /proc (dictFile): a temporary file for this load
		tmp, remove, err := tempFile("earshot-dict-*", dict)
		if err != nil {
			return nil, fmt.Errorf("%w: dict: %w", ErrInit, err)
		}
		defer remove() // ps_init has read it
		dictPath = tmp
	}
	args := []string{"earshot",
		"-hmm", cfg.HMM,
		"-lm", cfg.LM,
		"-dict", dictPath,
		"-remove_silence", "no",
	}
	args = append(args, searchArgs(cfg)...)
	argv := make([]*C.char, len(args))
	for i, a := range args {
		argv[i] = C.CString(a)
	}
	defer func() {
		for _, p := range argv {
			C.free(unsafe.Pointer(p))
		}
	}()
	// cmd_ln_parse_r copies the strings it keeps, so argv is freed above.
	cargv := (**C.char)(C.malloc(C.size_t(len(argv)) * C.size_t(unsafe.Sizeof(argv[0]))))
	defer C.free(unsafe.Pointer(cargv))
	copy(unsafe.Slice(cargv, len(argv)), argv)

	config := C.cmd_ln_parse_r(nil, C.ps_args(), C.int32(len(argv)), cargv, C.TRUE)
	if config == nil {
		return nil, fmt.Errorf("%w: parse arguments (hmm %s, lm %s, dict %s)", ErrInit, cfg.HMM, cfg.LM, cfg.Dict)
	}
	ps := C.ps_init(config)
	C.cmd_ln_free_r(config) // ps_init holds its own reference
	if ps == nil {
		return nil, fmt.Errorf("%w: load model (hmm %s, lm %s, dict %s)", ErrInit, cfg.HMM, cfg.LM, cfg.Dict)
	}
	d := &decoder{ps: ps, frate: float64(C.es_frate(ps))}
	if d.frate <= 0 {
		d.free()
		return nil, fmt.Errorf("%w: frame rate %v", ErrInit, d.frate)
	}
	carry, err := newCarryOver(ps)
	if err != nil {
		d.free()
		return nil, err
	}
	d.carry = carry
	d.initCMN()
	d.base = C.GoString(C.ps_get_search(ps))
	d.firstPassOnly = cfg.FirstPassOnly
	d.leanHMMs = cfg.leanMaxHMMs()
	d.recordHMMs = cfg.recordMaxHMMs()
	return d, nil
}

// knows reports whether the decoder's dictionary has word.
func (d *decoder) knows(word string) bool {
	cword := C.CString(word)
	defer C.free(unsafe.Pointer(cword))
	phones := C.ps_lookup_word(d.ps, cword)
	if phones == nil {
		return false
	}
	C.free(unsafe.Pointer(phones))
	return true
}

// configInt returns the integer argument name (as "-maxhmmpf") of the
// decoder's configuration, the value its searches are made with.
func (d *decoder) configInt(name string) int {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return int(C.es_config_int(d.ps, cname))
}

// addFirstPassSearch makes the first-pass-only search name at most hmms
// active HMMs per frame (0: the decoder's own) with es_first_pass_search;
// restore as there (false on a first-pass-only decoder). Call it between
// utterances.
func (d *decoder) addFirstPassSearch(name string, hmms int, restore bool) bool {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	r := C.int(0)
	if restore {
		r = 1
	}
	return C.es_first_pass_search(d.ps, cname, C.long(hmms), r) >= 0
}

// addCappedSearch makes the search name with the decoder's own passes
// at most hmms active HMMs per frame (es_capped_search). Call it between
// utterances.
func (d *decoder) addCappedSearch(name string, hmms int) bool {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return C.es_capped_search(d.ps, cname, C.long(hmms)) >= 0
}

// setSearch makes the search name the decoder's active one (between
// utterances); false when PocketSphinx refused.
func (d *decoder) setSearch(name string) bool {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return C.ps_set_search(d.ps, cname) >= 0
}

// free releases the decoder's C memory. It must be called exactly once.
// The freed heap is handed back to the system (malloc_trim): decoders are
// freed and loaded again whenever streams with other vocabularies come, and
// glibc otherwise keeps the pages in per-thread arenas, so the process grew
// by hundreds of MB under such traffic.
func (d *decoder) free() {
	if d.ps != nil {
		C.ps_free(d.ps)
		d.ps = nil
		C.malloc_trim(0)
	}
}

// reset forgets what earlier streams taught the decoder: it ends an open
// utterance and restores the CMN state left by ps_init (5prealpha switches
// a decoder to live CMN for good once it decodes incrementally, and carries
// the live mean across utterances) and what else an utterance leaves
// (carryOver), so a stream's result does not depend on which decoder of
// the pool it got or what that decoder decoded before.
func (d *decoder) reset() {
	if d.inUtt {
		C.ps_end_utt(d.ps)
		d.inUtt = false
	}
	if d.firstPass || d.lean || d.record {
		d.setSearch(d.base)
		d.firstPass, d.lean, d.record = false, false, false
	}
	d.resetCMN()
	d.carry.forget(d.ps)
}

// start begins an utterance; ps_start_stream makes frame numbers (and so
// word times) restart at 0 and resets the noise statistics, as
// pocketsphinx_batch does for every file.
func (d *decoder) start() error {
	if d.inUtt {
		return nil
	}
	if C.ps_start_stream(d.ps) < 0 || C.ps_start_utt(d.ps) < 0 {
		return fmt.Errorf("%w: start utterance", ErrDecode)
	}
	d.inUtt = true
	d.nSamples, d.refreshed = 0, 0
	return nil
}

// process feeds samples to the open utterance. With full set, pcm must be
// the whole utterance (PocketSphinx then normalises cepstra over all of
// it, as pocketsphinx_batch does).
func (d *decoder) process(pcm []int16, full bool) error {
	if len(pcm) == 0 {
		return nil
	}
	fu := C.int(0)
	if full {
		fu = 1
	}
	// The C side only reads pcm during the call and keeps no pointer.
	rv := C.ps_process_raw(d.ps, (*C.int16)(unsafe.Pointer(&pcm[0])), C.size_t(len(pcm)), 0, fu)
	if rv < 0 {
		return fmt.Errorf("%w: process %d samples", ErrDecode, len(pcm))
	}
	d.nSamples += len(pcm)
	return nil
}

// hyp returns the current best hypothesis text (cheap: no lattice).
func (d *decoder) hyp() string {
	var score C.int32
	h := C.ps_get_hyp(d.ps, &score)
	if h == nil {
		return ""
	}
	return C.GoString(h)
}

// end closes the utterance and returns its words.
func (d *decoder) end() ([]recognizer.Word, error) {
	if !d.inUtt {
		return nil, nil
	}
	d.inUtt = false
	if C.ps_end_utt(d.ps) < 0 {
		return nil, fmt.Errorf("%w: end utterance", ErrDecode)
	}
	return d.words(), nil
}

// words walks the best path of the finished utterance. Times come from
// frame numbers; the confidence is the word's posterior probability from
// the lattice that the bestpath pass builds.
func (d *decoder) words() []recognizer.Word {
	maxT := float64(d.nSamples) / recognizer.SampleRate
	var out []recognizer.Word
	for seg := C.ps_seg_iter(d.ps); seg != nil; seg = C.ps_seg_next(seg) {
		w, ok := wordText(C.GoString(C.ps_seg_word(seg)))
		if !ok {
			continue
		}
		var sf, ef C.int
		C.ps_seg_frames(seg, &sf, &ef)
		conf := float64(C.es_exp(d.ps, C.es_seg_prob(seg)))
		if d.inUtt {
			// The first pass has no posterior (PocketSphinx reports 0,
			// probability 1): use the acoustic score per frame instead.
			conf = frameConfidence(d, seg, int(ef-sf+1))
		}
		start := min(float64(sf)/d.frate, maxT)
		end := min(float64(ef+1)/d.frate, maxT)
		out = append(out, recognizer.Word{
			Word:       w,
			Start:      start,
			End:        max(end, start),
			Confidence: min(max(conf, 0), 1),
		})
	}
	return out
}

// frameConfidence maps a first-pass word's acoustic score per frame to
// 0..1: exp of the per-frame log score scaled so that a typical well
// matched frame (about -2 nats per frame relative to the best senone,
// PocketSphinx's normalised scores) gives about 0.8.
func frameConfidence(d *decoder, seg *C.ps_seg_t, frames int) float64 {
	if frames <= 0 {
		return 0
	}
	perFrame := float64(C.es_exp(d.ps, C.es_seg_ascr(seg)/C.int32(frames)))
	return min(max(math.Pow(perFrame, 0.1), 0), 1)
}

// wordText maps a dictionary entry to the word to report: false for the
// sentence markers, silence and fillers (<s>, </s>, <sil>, [NOISE],
// ++GARBAGE++), and alternate pronunciations lose their suffix
// ("read(2)" is "read").
func wordText(w string) (string, bool) {
	if w == "" || w[0] == '<' || w[0] == '[' || strings.HasPrefix(w, "++") {
		return "", false
	}
	if i := strings.IndexByte(w, '('); i > 0 && strings.HasSuffix(w, ")") {
		w = w[:i]
	}
	return w, true
}

// cleanHyp applies wordText to every word of a hypothesis string.
func cleanHyp(h string) []string {
	f := strings.Fields(h)
	out := f[:0]
	for _, w := range f {
		if w, ok := wordText(w); ok {
			out = append(out, w)
		}
	}
	return out
}

// vocabularySearch names the search a decoder decodes with once a
// vocabulary was applied.
const vocabularySearch = "earshot_vocabulary"

// vocabularyLambda is the interpolation weight of the vocabulary language
// model. It only needs to be small: a vocabulary word's log probability is
// chosen so that lambda times it reaches its floor (see vocabulary.go), and
// every other word loses log(1-lambda), 0.01 nats, which changes nothing.
const vocabularyLambda = 0.01

// lw is the decoder's language-model weight (-lw): PocketSphinx adds
// lw*log P(word) to a path's score.
func (d *decoder) lw() float64 { return float64(C.es_lw(d.ps)) }

// applyVocabulary puts v on the decoder for good (d.vocab records v's
// key): the dictionary is reloaded (ps_load_dict) from dict, the
// decoder's own dictionary text (searchDictionary), with add appended
// (v.dictionaryEntries: v's words the decoder lacks), and the decoder
// switches to a search whose language model interpolates its own with
// arpa, v's unigram model of every new and boosted word (see
// vocabulary.go).
//
// Words are never added with ps_add_word: it also adds each word to the
// n-gram model, and the trie models of PocketSphinx 5prealpha corrupt
// their unigram table when words are added one after another (the
// "Kah", "Kaa", "Cah"... vocabulary crashed the process in ps_process_raw
// about one run in two). Reloading the dictionary leaves the n-gram model
// untouched; the vocabulary model gives the new words their probability.
func (d *decoder) applyVocabulary(dict []byte, key string, add []entry, arpa string) error {
	d.reset()
	d.vocab = key // the decoder is changed from here on, even on error
	if len(add) > 0 {
		path, remove, err := tempFile("earshot-vocabulary-*.dict", dictionaryText(dict, add))
		if err != nil {
			return fmt.Errorf("%w: write dictionary: %w", ErrVocabulary, err)
		}
		cdict := C.CString(path)
		rv := C.ps_load_dict(d.ps, cdict, nil, nil)
		C.free(unsafe.Pointer(cdict))
		remove()
		if rv < 0 {
			return fmt.Errorf("%w: load dictionary with %d entries added", ErrVocabulary, len(add))
		}
	}
	if arpa == "" {
		return nil
	}
	lmPath, remove, err := tempFile("earshot-vocabulary-*.arpa", []byte(arpa))
	if err != nil {
		return fmt.Errorf("%w: write language model: %w", ErrVocabulary, err)
	}
	defer remove()
	base := C.ps_get_search(d.ps)
	cname, cpath := C.CString(vocabularySearch), C.CString(lmPath)
	defer C.free(unsafe.Pointer(cname))
	defer C.free(unsafe.Pointer(cpath))
	if rv := C.es_vocabulary_search(d.ps, base, cname, cpath, C.float(vocabularyLambda)); rv < 0 {
		return fmt.Errorf("%w: build interpolated language model (step %d)", ErrVocabulary, -rv)
	}
	return nil
}

// dictionaryText is the dictionary text base followed by entries, one
// "word PH ON ES" line each.
func dictionaryText(base []byte, entries []entry) []byte {
	var b bytes.Buffer
	b.Write(base)
	b.WriteByte('\n')
	for _, e := range entries {
		fmt.Fprintf(&b, "%s %s\n", e.word, strings.Join(e.phones, " "))
	}
	return b.Bytes()
}
