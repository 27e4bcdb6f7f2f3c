package app

import (
	"github.com/earshot-dev/earshot/ingest/sip"
	"github.com/prometheus/client_golang/prometheus"
)

// registerSIPMetrics registers the SIP door's gauges and counters, read
// from the door when scraped.
func registerSIPMetrics(reg prometheus.Registerer, sipSrv *sip.Server) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "earshot_sip_tcp_connections", Help: "TCP connections the SIP door holds open (bounded by sip.max_tcp_conns).",
	}, func() float64 { return float64(sipSrv.TCPConns()) }))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "earshot_sip_calls", Help: "SIP calls being set up or running.",
	}, func() float64 { return float64(sipSrv.Calls()) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "earshot_sip_tls_handshakes_total", Help: "TLS handshakes completed at the SIP door (sip.tls_listen).",
	}, func() float64 { n, _ := sipSrv.TLSHandshakes(); return float64(n) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "earshot_sip_tls_handshake_failures_total", Help: "TLS connections at the SIP door closed because their handshake failed or did not finish within sip.tls_handshake_timeout.",
	}, func() float64 { _, n := sipSrv.TLSHandshakes(); return float64(n) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "earshot_sip_auth_failures_total", Help: "SIP digest authentications that failed (wrong credentials, a nonce not the door's) on routes with auth.",
	}, func() float64 { n, _ := sipSrv.AuthTotals(); return float64(n) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "earshot_sip_auth_refused_total", Help: "INVITEs refused 403 unchallenged: their source failed digest authentication sip.auth_max_failures times within a minute.",
	}, func() float64 { _, n := sipSrv.AuthTotals(); return float64(n) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "earshot_sip_refused_total", Help: "SIP datagrams and TCP connections from sources outside sip.allow dropped unread.",
	}, func() float64 { return float64(sipSrv.Refused()) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "earshot_rtp_packets_total", Help: "RTP packets played out, summed over the streams of ended SIP calls.",
	}, func() float64 { r, _ := sipSrv.RTPTotals(); return float64(r) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "earshot_rtp_lost_packets_total", Help: "RTP packets never received (concealed with silence), summed over the streams of ended SIP calls.",
	}, func() float64 { _, l := sipSrv.RTPTotals(); return float64(l) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "earshot_rtp_foreign_packets_total", Help: "RTP packets dropped because they came from a source other than the call's (SDP, signalling peer or latched source), summed over ended SIP calls.",
	}, func() float64 { f, _, _ := sipSrv.SourceTotals(); return float64(f) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "earshot_rtp_latched_total", Help: "Streams of ended SIP calls that latched onto an RTP source other than their SDP address (sip.rtp_latching).",
	}, func() float64 { _, l, _ := sipSrv.SourceTotals(); return float64(l) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "earshot_sip_calls_without_audio_total", Help: "SIP calls that ended having received no RTP audio.",
	}, func() float64 { _, _, n := sipSrv.SourceTotals(); return float64(n) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "earshot_sip_dtmf_dropped_total", Help: "DTMF keys (RFC 4733 events, SIP INFO) of ended SIP calls dropped: past their call's bound (a flood: 40 at once, 20 a second after), or with the audio of a session too far behind.",
	}, func() float64 { return float64(sipSrv.DTMFDropped()) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "earshot_sip_srtp_refused_total", Help: "SIP offers refused with 488 by their route's srtp policy (plain on mandatory, RTP/SAVP on off, SDES keys without TLS, no usable a=crypto, a re-offer turning SRTP on or off).",
	}, func() float64 { n, _, _ := sipSrv.SRTPTotals(); return float64(n) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "earshot_srtp_auth_failed_packets_total", Help: "SRTP and SRTCP packets of ended SIP calls dropped because they did not authenticate (forged, damaged, plain, unknown MKI).",
	}, func() float64 { _, n, _ := sipSrv.SRTPTotals(); return float64(n) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "earshot_srtp_replayed_packets_total", Help: "SRTP and SRTCP packets of ended SIP calls dropped as replays (RFC 3711 replay window).",
	}, func() float64 { _, _, n := sipSrv.SRTPTotals(); return float64(n) }))
}
