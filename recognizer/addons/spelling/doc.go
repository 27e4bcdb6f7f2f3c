// Package spelling applies a custom spelling dictionary (SPEC 2.7
// custom_spelling_config.spelling_dictionary) to transcripts: every listed
// variant, matched case-insensitively as a whole word or as a phrase of
// consecutive words of one utterance, is written as its key. The key is
// also a variant of itself, so {"iPhone": []} fixes "iphone" too.
//
// A phrase match becomes one Word spanning the words it replaces (start of
// the first, end of the last, mean confidence); punctuation before the
// first and after the last matched word is kept. Longer variants win over
// shorter ones; among equal lengths the lexically smallest key wins, so the
// result is deterministic. The input is never modified; Text is rebuilt
// from the words and Confidence stays their mean. Utterances without words
// have their Text rewritten the same way.
package spelling
