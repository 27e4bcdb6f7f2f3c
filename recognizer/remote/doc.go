// Package remote is the recognizer.Engine for an OpenAI-compatible
// transcription server: it sends each utterance as a 16 kHz mono WAV to
// POST {URL}/audio/transcriptions (the protocol of whisper.cpp's server,
// faster-whisper servers and vLLM), asks for response_format=verbose_json
// with word and segment timestamps, and maps the reply into one
// recognizer.Utterance per Stream.Finish. Translate does the same through
// {URL}/audio/translations (any language to English).
//
// It owns a bounded set of request slots (Config.Capacity): NewStream and
// Translate take one and wait for it like a decoder pool, so at most
// Capacity streams are open and, because a stream has at most one request
// in flight, at most Capacity requests run at once. It owns a circuit
// breaker shared by all streams: after Config.BreakerFailures consecutive
// failed attempts (connection errors, 5xx, 429, 408, timeouts) requests
// fail fast with ErrUnavailable for Config.BreakerCooldown, then one probe
// request decides whether it closes again.
//
// Stream.Decode sends a whole utterance at once (one-pass finals of
// narrowband live sessions). The observer given to New hears of every
// finished request (RequestStat: action, outcome, time) and
// Engine.BreakerState reports the breaker, for metrics.
//
// It does not segment audio, detect endpoints or resample: callers write
// 16 kHz mono utterances, as to any engine. It does not log transcripts or
// the API key. Word times are seconds from the first sample written since
// the last Finish; the server's words are kept as it spelled them (trimmed
// of spaces, case and punctuation untouched).
package remote
