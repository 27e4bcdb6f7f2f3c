package telmodel

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"

	"github.com/zaf/g711"

	"github.com/earshot-dev/earshot/ingest/media"
)

// Law is a G.711 companding law.
type Law int

// The two G.711 laws.
const (
	MuLaw Law = iota // PCMU, North America and Japan
	ALaw             // PCMA, everywhere else
)

// Laws lists both laws, mu-law first.
var Laws = []Law{MuLaw, ALaw}

// String returns "mulaw" or "alaw".
func (l Law) String() string {
	if l == ALaw {
		return "alaw"
	}
	return "mulaw"
}

// TelephoneRate is G.711's sample rate.
const TelephoneRate = 8000

// EncodeG711 band-limits 16-bit PCM at rate Hz to 8 kHz with earshot's
// resampler (media.Resampler, the one every door and the pre-recorded path
// use) and compands it with law: what a telephone network carries.
func EncodeG711(pcm []int16, rate int, law Law) ([]byte, error) {
	rs, err := media.NewResampler(rate, TelephoneRate)
	if err != nil {
		return nil, err
	}
	in := make([]float32, len(pcm))
	for i, v := range pcm {
		in[i] = float32(v) / 32768
	}
	out := rs.Process(in, nil)
	out = rs.Flush(out)
	lin := media.ToInt16(out, nil)
	g := make([]byte, len(lin))
	for i, v := range lin {
		if law == ALaw {
			g[i] = g711.EncodeAlawFrame(v)
		} else {
			g[i] = g711.EncodeUlawFrame(v)
		}
	}
	return g, nil
}

// G711WAV wraps 8 kHz mono G.711 bytes in a WAV file (format tag 7 for
// mu-law, 6 for A-law), the form a call recording is uploaded in.
func G711WAV(g []byte, law Law) []byte {
	tag := uint16(7)
	if law == ALaw {
		tag = 6
	}
	b := make([]byte, 0, 58+len(g)+1)
	le := binary.LittleEndian
	b = append(b, "RIFF"...)
	b = le.AppendUint32(b, uint32(4+26+12+8+len(g)+len(g)%2))
	b = append(b, "WAVE"...)
	b = append(b, "fmt "...)
	b = le.AppendUint32(b, 18)
	b = le.AppendUint16(b, tag)
	b = le.AppendUint16(b, 1)
	b = le.AppendUint32(b, TelephoneRate)
	b = le.AppendUint32(b, TelephoneRate)
	b = le.AppendUint16(b, 1)
	b = le.AppendUint16(b, 8)
	b = le.AppendUint16(b, 0)
	b = append(b, "fact"...)
	b = le.AppendUint32(b, 4)
	b = le.AppendUint32(b, uint32(len(g)))
	b = append(b, "data"...)
	b = le.AppendUint32(b, uint32(len(g)))
	b = append(b, g...)
	if len(g)%2 == 1 {
		b = append(b, 0)
	}
	return b
}

// PCMWAV wraps 16-bit mono PCM at rate Hz in a WAV file.
func PCMWAV(pcm []int16, rate int) []byte {
	le := binary.LittleEndian
	n := 2 * len(pcm)
	b := make([]byte, 0, 44+n)
	b = append(b, "RIFF"...)
	b = le.AppendUint32(b, uint32(36+n))
	b = append(b, "WAVE"...)
	b = append(b, "fmt "...)
	b = le.AppendUint32(b, 16)
	b = le.AppendUint16(b, 1)
	b = le.AppendUint16(b, 1)
	b = le.AppendUint32(b, uint32(rate))
	b = le.AppendUint32(b, uint32(2*rate))
	b = le.AppendUint16(b, 2)
	b = le.AppendUint16(b, 16)
	b = append(b, "data"...)
	b = le.AppendUint32(b, uint32(n))
	for _, v := range pcm {
		b = le.AppendUint16(b, uint16(v))
	}
	return b
}

// checkMono returns the only channel of p, or an error.
func checkMono(p *media.PCM, what string) ([]int16, error) {
	if len(p.Channels) != 1 {
		return nil, fmt.Errorf("telmodel: %s has %d channels, want 1", what, len(p.Channels))
	}
	return p.Channels[0], nil
}

// Rendition is one G.711 rendition of a recording.
type Rendition struct {
	// WAV is the 8 kHz G.711 WAV file it was written to.
	WAV string
	// PCM is what earshot's decoder receives for that file: the G.711 WAV
	// decoded and resampled to 16 kHz by media.Decode, the pre-recorded
	// path (the live doors run the same G.711 decoder and resampler).
	PCM []int16
}

// Render decodes the mono recording src with media.Decode, makes its law
// rendition with EncodeG711, writes it as a G.711 WAV to dst and decodes
// that back to the decoder's 16 kHz input.
func Render(ctx context.Context, src, dst string, law Law) (Rendition, error) {
	p, err := media.Decode(ctx, src, nil)
	if err != nil {
		return Rendition{}, err
	}
	pcm, err := checkMono(p, src)
	if err != nil {
		return Rendition{}, err
	}
	g, err := EncodeG711(pcm, media.OutputRate, law)
	if err != nil {
		return Rendition{}, err
	}
	if err := os.WriteFile(dst, G711WAV(g, law), 0o644); err != nil {
		return Rendition{}, err
	}
	back, err := media.Decode(ctx, dst, nil)
	if err != nil {
		return Rendition{}, err
	}
	out, err := checkMono(back, dst)
	if err != nil {
		return Rendition{}, err
	}
	return Rendition{WAV: dst, PCM: out}, nil
}
