// Package sphinx is the embedded speech engine: a cgo binding of Debian's
// PocketSphinx 0.8+5prealpha (libpocketsphinx3, libsphinxbase3) behind
// recognizer.Engine.
//
// It owns a pool of decoders (each a ps_decoder_t holding its own copy of
// the acoustic model, the language model and the dictionary's words of
// that model, about 80 MB; see searchDictionary) and hands one to each
// Stream until the Stream is closed; a pool with Config.TenantShare hands
// one tenant's streams (recognizer.StreamOptions.Tenant) at most that
// share of its decoders (share.go). It does not segment audio, detect
// endpoints or resample; callers feed 16 kHz mono utterances.
//
// Invariants: this is the only package that includes PocketSphinx headers;
// no C type crosses its boundary; C memory is freed in Close, never by a
// finalizer; a decoder is used by at most one goroutine at a time (the
// Stream that checked it out). Decoders run with the same settings as
// Debian's pocketsphinx_batch given the same -hmm/-lm/-dict, so accuracy is
// comparable to it, except -remove_silence no: with PocketSphinx's own
// silence removal, 5prealpha reports word frames on a timeline with the
// removed frames cut out, so word times would be wrong. Batch callers get
// the reference's accuracy from Stream.Decode (one pass, cepstral mean over
// the whole utterance); incremental Write/Finish uses a running mean and is
// a few points worse.
//
// Custom vocabulary (recognizer.StreamOptions.Vocabulary) reloads a
// decoder's dictionary with the new entries and switches it to a language
// model interpolating its own with a unigram model of the vocabulary
// (vocabulary.go has the intensity mapping and the bounds every word and
// pronunciation is checked against before it reaches C, lts.go the
// letter-to-sound fallback). Words are never added with ps_add_word, which
// corrupts 5prealpha's trie language model (decoder.go); such a decoder
// only serves streams with the same vocabulary and is replaced by a freshly
// loaded one otherwise, so words never leak between jobs.
package sphinx
