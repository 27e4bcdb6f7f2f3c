// Package punctuation restores punctuation, capitalisation and number
// formatting in transcripts from engines that emit bare lower-case words
// (the embedded PocketSphinx engine). It is rule based and pure:
//
//   - Sentence ends come from the sentences package (pauses relative to
//     the speaker's typical pause, plus word cues). A sentence gets "?"
//     when it reads as a question (question word plus auxiliary, or
//     auxiliary-subject inversion), "." otherwise.
//   - Commas go at pauses inside a sentence of at least
//     max(200 ms, 0.6 x the speaker's typical pause, which mixes comma and
//     sentence pauses), never after a word
//     that cannot end a phrase ("the", "of", "and" ...); before "but" and
//     "however" inside a sentence; after an introductory "well", "yes",
//     "okay", "however", "oh", "anyway", and after "now" or "so" followed
//     by a pause. A conjunction in a list ("x, y and z") gets its comma
//     from the same pause rule.
//   - Capitals: the first word of each sentence, "I" and its contractions,
//     days, months (not "may" and "march", which are mostly verbs) and
//     nationality and language words.
//   - Numbers: runs of number words become digits when they are 10 or more
//     or contain a scale word ("forty two" → "42", "two hundred and five"
//     → "205", "three thousand" → "3000"); "fourteen fifty five" after "in",
//     "of", "about", "since" ... (or starting eighteen, nineteen, twenty)
//     reads as a year → "1455"; "three point five" → "3.5"; "fifty
//     percent" → "50%". One to nine stay words. A merged number is one
//     Word spanning the words it replaces, with their mean confidence.
//
// A segment that already has punctuation or capitals (a remote engine's
// output, or Restore's own) is left as it is, so Restore is idempotent.
// The input is never modified; results are deep copies.
package punctuation
