// Package pii redacts personal data from transcripts: given the entities
// package ner found, it returns copies of the utterances in which each
// entity's words are replaced, either by one marker word "[ENTITY_TYPE]"
// spanning the entity's time (MARKER, the default) or by asterisks, one per
// character, word by word (MASK), as PROTOCOL.md defines
// pii_redaction_config.processed_text_type.
//
// Invariants: the input is never modified; every word of every entity is
// replaced (overlapping entities are merged); each utterance's
// Text is rebuilt from its words, so no redacted word survives in either.
// Detection is ner's job; this package does no recognition of its own.
//
// Stream (stream.go) is the live form: it redacts a session's finals as
// they go out, holding back a final that ends in digits until the next one
// shows whether a number read in groups goes on, so no group of a card
// number leaves unredacted; partials are redacted with their trailing
// digits masked. Languages (languages.go) lists what it reads.
package pii
