// Package sip is the telephony door: a SIP user agent server (RFC 3261,
// emiago/sipgo) on UDP and TCP that answers calls from a PBX or SBC with an
// SDP answer (RFC 3264, pion/sdp) for G.711, opens one live session per
// call through the daemon's OpenLive, and feeds it the call's RTP through
// ingest/rtp. SIPREC (RFC 7866, metadata RFC 7865) calls put their two
// streams on channels 0 and 1 and their participants into custom_metadata.
//
// It owns routing (request-URI user to account and live options), source
// network checks and the SIP replies; it does no decoding, VAD or
// recognition and never imports the daemon. Every call ends its session
// exactly once: BYE, CANCEL, RTP timeout, session end or shutdown.
package sip
