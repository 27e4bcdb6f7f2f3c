// Package summarize writes extractive summaries and chapters of a
// transcript, offline and deterministically:
//
//   - Summarize ranks the transcript's sentences (sentences.Split) with
//     TextRank (Mihalcea and Tarau, 2004): a graph whose edges weigh the
//     content words two sentences share, normalised by their lengths, and
//     PageRank over it; a transcript of more than 400 sentences is ranked
//     in consecutive blocks of at most 400, each its own graph, so the
//     cost grows linearly with the transcript (textrank.go). It returns the best sentences in their spoken
//     order, skipping near-duplicates: about a fifth of them for
//     "general", one or two for "concise", and the same as "general" as
//     lines starting "- " for "bullet_points".
//   - Chapters segments the sentences into topics by lexical cohesion, as
//     TextTiling does (Hearst, 1997): the cosine similarity of the word
//     counts of the three sentences before and after each gap, depth
//     scores of the valleys of that curve, and a cut at the deepest
//     valleys that pass mean - sd/2, keeping chapters at least four
//     sentences and 30 s long. A chapter's keywords are its words and
//     two-word phrases ranked by tf-idf against the whole transcript, its
//     headline the top three of them, its gist the top one, its summary
//     its one to three best TextRank sentences.
//
// Every sentence in a result is a sentence of the input, capitalised and
// ended with a full stop when the engine gave none. Words are English
// (stop words, suffix stripping): Languages says so, and the pipeline runs
// both on English transcripts only.
// The abstractive, model-written variants live in the llm package.
package summarize
