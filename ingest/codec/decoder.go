package codec

import (
	"fmt"

	"github.com/earshot-dev/earshot/ingest/codec/g722"
	"github.com/earshot-dev/earshot/ingest/codec/opus"
)

// Decoder turns one stream's payloads into 16 kHz mono PCM. Not safe for
// concurrent use; Close frees its C state.
type Decoder interface {
	// Decode appends the samples of one payload to pcm. An empty payload
	// is a lost packet: Opus conceals 20 ms, G.722 adds nothing. A payload
	// the decoder refuses returns an error and pcm unchanged; the decoder
	// stays usable.
	Decode(payload []byte, pcm []int16) ([]int16, error)
	Close() error
}

// NewDecoder returns a decoder for a wideband codec (G722, Opus); the
// G.711 laws are decoded behind the session and have none.
func NewDecoder(c Codec) (Decoder, error) {
	switch c {
	case G722:
		return g722.NewDecoder()
	case Opus:
		return opus.NewDecoder(c.row().rate, 1)
	}
	return nil, fmt.Errorf("codec: %s is not decoded by a door", c)
}

// AppendLE appends pcm to b as 16-bit little-endian samples (the session's
// wav/pcm bytes).
func AppendLE(b []byte, pcm []int16) []byte {
	for _, s := range pcm {
		b = append(b, byte(s), byte(uint16(s)>>8))
	}
	return b
}
