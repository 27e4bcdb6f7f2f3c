package pii

// Languages returns the language codes whose transcripts pii_redaction
// reads: only English. Redact itself replaces whatever entities it is
// given, but the personal data it is given is found by English rules
// (package ner's, and the rules for it here), so a transcript of another
// language would come back with its personal data in place: the pipeline
// does not report a redaction there.
func Languages() []string { return []string{"en"} }
