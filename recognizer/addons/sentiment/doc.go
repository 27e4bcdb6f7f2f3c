// Package sentiment labels each utterance of a transcript with a sentiment
// (positive, negative, neutral or mixed, as PROTOCOL.md defines
// sentiment_analysis results) and an emotion (joy, anger, sadness, fear,
// surprise, disgust or neutral).
//
// It is a lexicon-and-rules analyser in the manner of VADER (Hutto and
// Gilbert, 2014): words carry a valence from -4 to +4; a negator within
// three words before a word flips and damps it ("not good"); boosters and
// dampeners before it strengthen or weaken it ("very good", "slightly
// annoying"), and degree adjectives intensify the noun they qualify
// ("great sorrow"); after "but" the clause that follows weighs three times
// the one before. The lexicons in lexicon.go were hand-written for earshot;
// no published lexicon was copied. It reads transcripts as recognisers
// write them (lower case, no punctuation), so it has no punctuation or
// capitalisation cues.
//
// The package is pure and keeps no state.
package sentiment
