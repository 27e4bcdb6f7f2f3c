// Package sentences splits a transcript into sentences. Speech recognisers
// such as PocketSphinx emit lower-case words without punctuation, so the
// boundaries come from the words' timing and from word cues:
//
//   - Each channel is one speaker stream. Its pauses (gaps of at least
//     30 ms between consecutive words, across utterances) give the
//     speaker's typical pause m: their median, or 250 ms when there are
//     fewer than four, clamped to 120..600 ms. A gap g is scored relative
//     to it, r = g/m, so a fast talker's short pauses count as much as a
//     slow talker's long ones.
//   - Word cues add to r: a strong sentence opener after the gap ("but",
//     "so", "now", "well", "okay", "however", a question word followed by
//     an auxiliary, an auxiliary followed by a subject such as "do you")
//     adds 1, "i" and "let's" 0.75, "and" and other subject pronouns 0.5,
//     a demonstrative or "the" 0.25. Long runs add 0.5 from 20 words and
//     1.5 from 35.
//   - A gap is a boundary when g >= 450 ms (300 ms before a strong
//     opener) and r+cues >= 2, or when g >= 1.5 s. Sentence pauses in
//     speech are typically 0.5-1 s and about twice a speaker's median
//     pause; commas take 0.2-0.4 s. Never after a word that cannot end an
//     English sentence (articles, prepositions, coordinating conjunctions,
//     possessives: "the", "of", "and", "my" ...), nor before one that
//     cannot start one ("of", "than"), unless the gap is at least 3 s; a
//     sentence of fewer than three words needs r+cues >= 3.
//   - A sentence still longer than 40 words is cut at its best-scoring
//     gap that leaves at least five words on each side.
//   - Input that is already punctuated (any word of the channel ends with
//     ".", "?" or "!", as remote engines and punctuation.Restore produce)
//     is split after those words and at gaps of 1.5 s or more only.
//
// A sentence is a question when it starts with a question word followed
// by an auxiliary ("what is", "how do"), with "what/which/whose", a noun,
// an auxiliary and a subject ("what time is it"), with "how many",
// "how much" and the like, or with an auxiliary followed by a subject
// ("do you", "is it", "can we"), or when it already ends with "?".
//
// Sentences never span channels; they may span utterances (a voice
// activity detector cuts at pauses, not at sentence ends). The package is
// pure and keeps no state; it does not add punctuation (punctuation does).
package sentences
