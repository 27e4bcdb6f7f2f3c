package punctuation

// Languages returns the language codes whose transcripts Restore reads:
// only English. Its question, comma and capital rules and its number words
// are English, so the pipeline does not run it on another language.
func Languages() []string { return []string{"en"} }
