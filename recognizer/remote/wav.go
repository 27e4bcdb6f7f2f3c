package remote

import (
	"encoding/binary"

	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/recognizer"
)

// wavHeaderSize is the size of the header appendWAV writes before the
// samples.
const wavHeaderSize = media.WAVHeaderSize

// appendWAV appends pcm as a 16 kHz mono 16-bit PCM RIFF/WAVE file (the
// canonical 44-byte header, then little-endian samples) to b.
func appendWAV(b []byte, pcm []int16) []byte {
	f := media.Format{Encoding: media.LinearPCM, BitDepth: 16, SampleRate: recognizer.SampleRate, Channels: 1}
	b = media.AppendWAVHeader(b, f, int64(2*len(pcm)))
	for _, s := range pcm {
		b = binary.LittleEndian.AppendUint16(b, uint16(s))
	}
	return b
}
