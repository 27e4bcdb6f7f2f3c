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

// Encoder is how a G.711 encoder picks a sample's code. Encoders agree on
// the levels but not on the last step, which decides what a quiet passage
// decodes to; a model adapted on one encoder's audio alone fits another's
// worse (docs/live-tuning.md: 35.4 against 40.0 % WER on testdata mu-law,
// the same clips through two encoders), so the adaptation set has both.
type Encoder int

// The encoders a telephone network's audio commonly comes from.
const (
	// Magnitude rounds the sample's magnitude down within its segment
	// (Sun's g711.c, zaf/g711, spandsp): the small values on either side
	// of zero become the zero code.
	Magnitude Encoder = iota
	// Nearest truncates the sample to 14 bits and takes the code whose
	// level is nearest (ffmpeg's pcm_mulaw and pcm_alaw): the small
	// negative values become the first negative level.
	Nearest
)

// Variant names one law through one encoder.
type Variant struct {
	Law     Law
	Encoder Encoder
}

// Variants are the adaptation set's: both laws through both encoders.
var Variants = []Variant{{MuLaw, Magnitude}, {ALaw, Magnitude}, {MuLaw, Nearest}, {ALaw, Nearest}}

// String is the law's name, "-nearest" added for Nearest.
func (r Variant) String() string {
	if r.Encoder == Nearest {
		return r.Law.String() + "-nearest"
	}
	return r.Law.String()
}

// encode returns the code of v.
func (r Variant) encode(v int16) byte {
	switch {
	case r.Encoder == Nearest && r.Law == ALaw:
		return nearestALaw[(int(v)+32768)>>2]
	case r.Encoder == Nearest:
		return nearestULaw[(int(v)+32768)>>2]
	case r.Law == ALaw:
		return g711.EncodeAlawFrame(v)
	default:
		return g711.EncodeUlawFrame(v)
	}
}

// nearestULaw and nearestALaw map a 14-bit sample (index 8192 is zero) to
// the code of the nearest level: the tables of the Nearest encoder.
var (
	nearestULaw = nearestTable(g711.DecodeUlawFrame, 0xff)
	nearestALaw = nearestTable(g711.DecodeAlawFrame, 0xd5)
)

// nearestTable builds a Nearest encoder's table from the law's decoder, as
// ffmpeg's build_xlaw_table does: a sample takes the level i until the
// midpoint between levels i and i+1. mask is what the law XORs a level's
// index with to make its positive code (0xff for mu-law, 0xd5 for A-law;
// 0x80 more gives the negative one).
func nearestTable(decode func(uint8) int16, mask byte) []byte {
	t := make([]byte, 16384)
	t[8192] = mask
	j := 1
	for i := 0; i < 127; i++ {
		mid := (int(decode(byte(i)^mask)) + int(decode(byte(i+1)^mask)) + 4) >> 3
		for ; j < mid; j++ {
			t[8192-j] = byte(i) ^ mask ^ 0x80
			t[8192+j] = byte(i) ^ mask
		}
	}
	for ; j < 8192; j++ {
		t[8192-j] = 127 ^ mask ^ 0x80
		t[8192+j] = 127 ^ mask
	}
	t[0] = t[1]
	return t
}

// EncodeG711 band-limits 16-bit PCM at rate Hz to 8 kHz with earshot's
// resampler (media.Resampler, the one every door and the pre-recorded path
// use) and compands it with law (the Magnitude encoder): what a telephone
// network carries.
func EncodeG711(pcm []int16, rate int, law Law) ([]byte, error) {
	return Variant{Law: law}.EncodeG711(pcm, rate)
}

// EncodeG711 is EncodeG711 through r's encoder.
func (r Variant) EncodeG711(pcm []int16, rate int) ([]byte, error) {
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
	return r.Compand(media.ToInt16(out, nil)), nil
}

// Compand encodes 8 kHz samples with r's law and encoder.
func (r Variant) Compand(lin []int16) []byte {
	g := make([]byte, len(lin))
	for i, v := range lin {
		g[i] = r.encode(v)
	}
	return g
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
	return Variant{Law: law}.Render(ctx, src, dst)
}

// Render is Render through v's encoder.
func (v Variant) Render(ctx context.Context, src, dst string) (Rendition, error) {
	p, err := media.Decode(ctx, src, nil)
	if err != nil {
		return Rendition{}, err
	}
	pcm, err := checkMono(p, src)
	if err != nil {
		return Rendition{}, err
	}
	g, err := v.EncodeG711(pcm, media.OutputRate)
	if err != nil {
		return Rendition{}, err
	}
	if err := os.WriteFile(dst, G711WAV(g, v.Law), 0o644); err != nil {
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
