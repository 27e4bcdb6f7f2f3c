// Package transcript is the contract's shapes of what recognition answers,
// apart from the engines that produce them: the parts of the result object
// (SPEC 2.5: metadata, transcription, utterances, words, add-on envelopes,
// translations, subtitles) and the engines list of GET /v2/engines.
// recognizer/pipeline builds them; the doors read them (api's /v1 answers,
// GET /v2/engines) without linking an engine. It imports nothing of
// earshot and no cgo, so a door that reads a result stays engine-free
// (internal/archtest).
package transcript
