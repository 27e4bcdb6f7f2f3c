package ner

// Languages returns the language codes whose transcripts Find reads: only
// English. Its spoken-number readers, cue phrases, name, place and medical
// lists and organisation suffixes are English words; on a transcript of
// another language it would miss that language's entities and mistake
// its words for English ones, so the pipeline does not run it there.
func Languages() []string { return []string{"en"} }
