// Package sip is the telephony door: a SIP user agent server (RFC 3261,
// emiago/sipgo) on UDP, TCP and TLS (tls.go) that answers calls from a PBX or SBC with an
// SDP answer (RFC 3264, pion/sdp) for G.722 when every stream offers it,
// else G.711 (codecs read through ingest/codec), opens one live session per
// call through the daemon's OpenLive (16 kHz wav/pcm for G.722, 8 kHz
// wav/ulaw or wav/alaw for G.711), and feeds it the call's RTP through
// ingest/rtp. SIPREC (RFC 7866, metadata RFC 7865) calls put their two
// streams on channels 0 and 1 and their participants into custom_metadata.
//
// It owns routing (request-URI user to account and live options), source
// network checks, routes' digest authentication (auth.go) and the SIP replies; it does no decoding (ingest/rtp
// decodes G.722), VAD or recognition and never imports the daemon. A call
// keeps its codec family: a re-INVITE may switch G.711 laws, never between
// narrowband and wideband. Every call ends its session
// exactly once: BYE, CANCEL, RTP timeout, session end or shutdown.
package sip
