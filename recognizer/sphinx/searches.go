package sphinx

// firstPassSearch names the first-pass-only search a decoder of a full
// pool makes for a stream that reads its words from the first pass only
// (Stream.FirstPassOnly): a call decoded by the wideband model when no
// telephone model is installed. It keeps the decoder's own -maxhmmpf: the
// first-pass cap of the live pools (Config.Live) was measured on wideband
// audio only, and with it e2e TestSIPLongCall, whose daemon then had no
// telephone model, lost a call's words (2026-11-24;
// sphinx.TestFirstPassCap). Wideband live streams decode on the
// live pool, whose own search is the capped first pass.
const firstPassSearch = "earshot_first_pass"

// useFirstPass switches the decoder, between utterances, to the
// first-pass-only search, made on first use (about 0.35 s of CPU and
// 28 MB, its own lexicon tree); reset switches back. A decoder holding a
// vocabulary keeps its vocabulary search (its second pass then still runs
// at the end of each utterance), and a first-pass-only pool's decoder its
// own search.
func (d *decoder) useFirstPass() {
	if d.inUtt || d.firstPass || d.vocab != "" || d.firstPassOnly {
		return
	}
	if !d.hasFirstPass {
		if !d.addFirstPassSearch(firstPassSearch, 0, true) {
			return // the stream decodes on the full search
		}
		d.hasFirstPass = true
	}
	if d.setSearch(firstPassSearch) {
		d.firstPass = true
	}
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

// recordSearch names the record search of a full pool's decoder: its own
// passes with at most recordHMMs active HMMs per frame, for the whole
// recordings of live sessions (Stream.Record).
const recordSearch = "earshot_record"

// useRecord switches the decoder, between utterances, to its record
// search, made on first use (makeRecord: not ahead of need, as most
// boxes' wideband decoders never decode a session's record); reset
// switches back. A decoder holding a vocabulary, or
// on another search, keeps its search.
func (d *decoder) useRecord() {
	if d.inUtt || d.record || d.firstPass || d.lean || d.vocab != "" || !d.makeRecord() {
		return
	}
	if d.setSearch(recordSearch) {
		d.record = true
	}
}

// makeRecord makes the record search (once; about 0.35 s of CPU and its
// own lexicon tree) without switching to it; false when the decoder has
// none or it could not be made. Call it between utterances.
func (d *decoder) makeRecord() bool {
	if d.hasRecord {
		return true
	}
	if d.inUtt || d.recordHMMs <= 0 || d.vocab != "" {
		return false
	}
	if !d.addCappedSearch(recordSearch, d.recordHMMs) {
		return false
	}
	d.hasRecord = true
	return true
}
