package sentiment

// Languages returns the language codes whose transcripts Analyze reads:
// only English. Its lexicons, negators and boosters are English words; on
// another language every utterance would read as neutral, so the pipeline
// does not run it there.
func Languages() []string { return []string{"en"} }
