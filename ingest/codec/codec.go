package codec

import (
	"strconv"
	"strings"

	"github.com/earshot-dev/earshot/ingest/media"
)

// Codec is an RTP audio encoding a door can take.
type Codec int

// Codecs the doors negotiate.
const (
	// None is no codec earshot takes.
	None Codec = iota
	// PCMU is G.711 mu-law (RFC 3551 static payload type 0).
	PCMU
	// PCMA is G.711 A-law (static payload type 8).
	PCMA
	// G722 is ITU-T G.722 at 64 kbit/s (static payload type 9): 16 kHz
	// audio on an 8000 Hz RTP clock (RFC 3551 §4.5.2), one byte per tick.
	G722
	// Opus is RFC 7587 Opus (dynamic payload type, opus/48000/2).
	Opus
)

// spec is one row of the table.
type spec struct {
	name     string // SDP encoding name, as this door writes it
	clock    int    // RTP clock rate (the rtpmap's rate)
	channels int    // rtpmap encoding parameters (0: none written)
	static   int    // RFC 3551 static payload type, -1 for dynamic
	rate     int    // sample rate of the audio a door writes to the session
	silence  byte   // byte that decodes to (near) zero, for byte-stream codecs
}

var table = [...]spec{
	None: {name: "none", static: -1},
	PCMU: {name: "PCMU", clock: 8000, static: 0, rate: 8000, silence: 0xFF},
	PCMA: {name: "PCMA", clock: 8000, static: 8, rate: 8000, silence: 0xD5},
	// 0xFF (lowest codes of both sub-bands) decodes to within 2 LSB of zero
	// and pulls the ADPCM predictors back to rest within a few ms.
	G722: {name: "G722", clock: 8000, static: 9, rate: 16000, silence: 0xFF},
	Opus: {name: "opus", clock: 48000, channels: 2, static: -1, rate: 16000},
}

// OpusPayloadType is the dynamic payload type the WebRTC door registers
// Opus under (the browsers' choice).
const OpusPayloadType = 111

// OpusFmtp is the format parameters the WebRTC door registers Opus with.
const OpusFmtp = "minptime=10;useinbandfec=1"

func (c Codec) row() spec {
	if c < 0 || int(c) >= len(table) {
		return table[None]
	}
	return table[c]
}

// String is the SDP encoding name ("PCMU", "PCMA", "G722", "opus").
func (c Codec) String() string { return c.row().name }

// ClockRate is the RTP clock rate, as the rtpmap says it.
func (c Codec) ClockRate() int { return c.row().clock }

// RTPMap is the rtpmap value after the payload type: "PCMU/8000",
// "G722/8000", "opus/48000/2".
func (c Codec) RTPMap() string {
	r := c.row()
	s := r.name + "/" + strconv.Itoa(r.clock)
	if r.channels > 0 {
		s += "/" + strconv.Itoa(r.channels)
	}
	return s
}

// StaticPT is the RFC 3551 static payload type, if the codec has one.
func (c Codec) StaticPT() (uint8, bool) {
	r := c.row()
	return uint8(max(r.static, 0)), r.static >= 0
}

// G711 reports whether c is PCMU or PCMA: written to the session as is.
func (c Codec) G711() bool { return c == PCMU || c == PCMA }

// Wideband reports whether c carries 16 kHz audio, decoded by the door.
func (c Codec) Wideband() bool { return c == G722 || c == Opus }

// Compatible reports whether a stream may switch from c to d mid-session
// (a re-INVITE): the session's format must not change, so the two G.711
// laws (transcoded) or the same wideband codec.
func (c Codec) Compatible(d Codec) bool {
	return c == d || c.G711() && d.G711()
}

// Silence is the byte that decodes to (near) zero for the byte-stream
// codecs, one per RTP clock tick: G.711 and G.722. Opus has none (0).
func (c Codec) Silence() byte { return c.row().silence }

// Format is what a door writes to a live session for a call of this codec
// with channels streams: G.711 bytes at 8000 Hz, or 16-bit PCM at 16000 Hz
// for the wideband codecs (decoded by the door).
func (c Codec) Format(channels int) media.Format {
	switch c {
	case PCMU:
		return media.Format{Encoding: media.MuLaw, BitDepth: 8, SampleRate: 8000, Channels: channels}
	case PCMA:
		return media.Format{Encoding: media.ALaw, BitDepth: 8, SampleRate: 8000, Channels: channels}
	}
	return media.Format{Encoding: media.LinearPCM, BitDepth: 16, SampleRate: c.row().rate, Channels: channels}
}

// ForFormat is the codec whose Format a session opened for f takes: PCMU
// for 8 kHz mu-law, PCMA for 8 kHz A-law, and wide (G722 or Opus, the
// door's wideband codec) for 16-bit PCM at 16 kHz; None for anything else.
func ForFormat(f media.Format, wide Codec) Codec {
	for _, c := range []Codec{PCMU, PCMA, wide} {
		if c != None && c.Format(f.Channels) == f {
			return c
		}
	}
	return None
}

// Lookup is the codec of payload type pt in an SDP media description:
// by its rtpmap value when the description maps it ("PCMA/8000",
// "opus/48000/2", "G722/8000/1"; names are case-insensitive), else by the
// RFC 3551 static type. None when earshot does not take it.
func Lookup(pt int, rtpmap string, mapped bool) Codec {
	if !mapped {
		for c := PCMU; c <= Opus; c++ {
			if s, ok := c.StaticPT(); ok && int(s) == pt {
				return c
			}
		}
		return None
	}
	name, rest, _ := strings.Cut(strings.TrimSpace(rtpmap), "/")
	rate, chans, _ := strings.Cut(rest, "/")
	for c := PCMU; c <= Opus; c++ {
		r := c.row()
		if !strings.EqualFold(name, r.name) || rate != strconv.Itoa(r.clock) {
			continue
		}
		// G.711 and G.722 are mono ("/1" or nothing); Opus is always "/2".
		if chans == "" && r.channels == 0 || chans == "1" && r.channels == 0 || chans == strconv.Itoa(r.channels) && r.channels > 0 {
			return c
		}
	}
	return None
}
