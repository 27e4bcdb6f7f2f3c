package remote

import (
	"encoding/binary"

	"github.com/earshot-dev/earshot/recognizer"
)

// wavHeaderSize is the size of the canonical RIFF/WAVE header appendWAV
// writes before the samples.
const wavHeaderSize = 44

// appendWAV appends pcm as a 16 kHz mono 16-bit PCM RIFF/WAVE file (the
// canonical 44-byte header, then little-endian samples) to b.
func appendWAV(b []byte, pcm []int16) []byte {
	data := uint32(2 * len(pcm))
	le := binary.LittleEndian
	b = append(b, "RIFF"...)
	b = le.AppendUint32(b, 36+data)
	b = append(b, "WAVEfmt "...)
	b = le.AppendUint32(b, 16)                      // fmt chunk size
	b = le.AppendUint16(b, 1)                       // PCM
	b = le.AppendUint16(b, 1)                       // mono
	b = le.AppendUint32(b, recognizer.SampleRate)   // sample rate
	b = le.AppendUint32(b, 2*recognizer.SampleRate) // byte rate
	b = le.AppendUint16(b, 2)                       // block align
	b = le.AppendUint16(b, 16)                      // bits per sample
	b = append(b, "data"...)
	b = le.AppendUint32(b, data)
	for _, s := range pcm {
		b = le.AppendUint16(b, uint16(s))
	}
	return b
}
