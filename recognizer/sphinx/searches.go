package sphinx

// firstPassSearch names the search of streams that read their words from
// the first pass only (Stream.FirstPassOnly), capped at firstPassHMMs
// active HMMs per frame; narrowFirstPassSearch is the same search at the
// decoder's own -maxhmmpf, for telephone-band audio (a call decoded by a
// wideband model when no telephone model is installed): the cap was
// measured on wideband audio only, and with it e2e TestSIPLongCall, whose
// daemon then had no telephone model, lost a call's words (2026-11-24;
// sphinx.TestFirstPassNarrowband).
const (
	firstPassSearch       = "earshot_first_pass"
	narrowFirstPassSearch = "earshot_first_pass_narrowband"
)

// useFirstPass switches the decoder, between utterances, to the
// first-pass-only search for wideband or (narrow) telephone-band audio;
// reset switches back. A decoder holding a vocabulary keeps its vocabulary
// search (its second pass then still runs at the end of each utterance).
func (d *decoder) useFirstPass(narrow bool) {
	if d.inUtt || d.firstPass || d.vocab != "" || d.firstPassOnly {
		return
	}
	if !d.makeFirstPass(narrow) {
		return // the stream decodes on the full search
	}
	_, name, _ := d.firstPassOf(narrow)
	if d.setSearch(name) {
		d.firstPass = true
	}
}

// makeFirstPass makes the first-pass-only search for wideband or (narrow)
// telephone-band audio (once; about 0.35 s of CPU and its own lexicon
// tree) without switching to it; false when it could not be made. Call it
// between utterances.
func (d *decoder) makeFirstPass(narrow bool) bool {
	made, name, hmms := d.firstPassOf(narrow)
	if *made {
		return true
	}
	if d.inUtt {
		return false
	}
	if !d.addFirstPassSearch(name, hmms, true) {
		return false
	}
	*made = true
	return true
}

// firstPassOf is the first-pass search for wideband or (narrow) telephone-band
// audio: whether it was made, its name and -maxhmmpf (0: the decoder's own).
func (d *decoder) firstPassOf(narrow bool) (made *bool, name string, maxHMMs int) {
	if narrow {
		return &d.hasNarrowFirstPass, narrowFirstPassSearch, 0
	}
	return &d.hasFirstPass, firstPassSearch, d.firstPassHMMs
}

// leanSearch names the lean search of a first-pass-only decoder: its own
// search with at most leanHMMs active HMMs per frame (Stream.Lean).
const leanSearch = "earshot_lean"

// useLean switches a first-pass-only decoder, between utterances, to its
// lean search (on) or back to its own; it reports whether the decoder is
// now on the lean search. The search is made on first use when the
// background load has not made it (makeLean).
func (d *decoder) useLean(on bool) bool {
	if d.inUtt || !d.canLean() || on == d.lean {
		return d.lean
	}
	name := d.base
	if on {
		if !d.makeLean() {
			return false
		}
		name = leanSearch
	}
	if d.setSearch(name) {
		d.lean = on
	}
	return d.lean
}

// canLean reports whether the decoder has a lean search to switch to: a
// first-pass-only pool's decoder without a vocabulary, with
// OverloadMaxHMMsPerFrame not off.
func (d *decoder) canLean() bool {
	return d.firstPassOnly && d.leanHMMs > 0 && d.vocab == ""
}

// makeLean makes the lean search (once; about 0.35 s of CPU and its own
// lexicon tree) without switching to it; false when it could not be made.
// Call it between utterances.
func (d *decoder) makeLean() bool {
	if d.hasLean {
		return true
	}
	if d.inUtt || d.leanHMMs <= 0 {
		return false
	}
	if !d.addFirstPassSearch(leanSearch, d.leanHMMs, false) {
		return false
	}
	d.hasLean = true
	return true
}
