package rtp

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/zaf/g711"

	"github.com/earshot-dev/earshot/ingest/codec"
)

// transcode rewrites b in place from one G.711 law to the other (a codec
// change by re-INVITE mid-call); same laws and other codecs are left alone.
func transcode(b []byte, from, to codec.Codec) {
	switch {
	case from == to || !from.G711() || !to.G711():
	case from == codec.PCMA:
		for i, v := range b {
			b[i] = g711.Alaw2UlawFrame(v)
		}
	default:
		for i, v := range b {
			b[i] = g711.Ulaw2AlawFrame(v)
		}
	}
}

// decodeWriter decodes the interleaved bytes of a wideband byte-stream
// codec (G.722: one byte per RTP clock tick per channel) channel by channel
// and writes 16-bit little-endian PCM, interleaved, to w.
type decodeWriter struct {
	w    Writer
	decs []codec.Decoder
	ch   [][]byte
	pcm  [][]int16
	out  []byte
}

func newDecodeWriter(w Writer, c codec.Codec, channels int) (*decodeWriter, error) {
	d := &decodeWriter{w: w, ch: make([][]byte, channels), pcm: make([][]int16, channels)}
	for range channels {
		dec, err := codec.NewDecoder(c)
		if err != nil {
			d.Close()
			return nil, err
		}
		d.decs = append(d.decs, dec)
	}
	return d, nil
}

// Write takes whole frames (the mixer's output: len(b) is a multiple of
// the channel count).
func (d *decodeWriter) Write(ctx context.Context, b []byte) error {
	n := len(d.decs)
	for c := range d.ch {
		d.ch[c] = d.ch[c][:0]
	}
	for i, v := range b[:len(b)-len(b)%n] {
		d.ch[i%n] = append(d.ch[i%n], v)
	}
	frames := -1
	for c, dec := range d.decs {
		var err error
		d.pcm[c], err = dec.Decode(d.ch[c], d.pcm[c][:0])
		if err != nil {
			return fmt.Errorf("rtp: decode: %w", err)
		}
		if frames < 0 || len(d.pcm[c]) < frames {
			frames = len(d.pcm[c])
		}
	}
	d.out = d.out[:0]
	for i := range max(frames, 0) {
		for c := range d.pcm {
			d.out = binary.LittleEndian.AppendUint16(d.out, uint16(d.pcm[c][i]))
		}
	}
	if len(d.out) == 0 {
		return nil
	}
	return d.w.Write(ctx, d.out)
}

// Close frees the decoders.
func (d *decodeWriter) Close() {
	for _, dec := range d.decs {
		dec.Close()
	}
}
