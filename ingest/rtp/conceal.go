package rtp

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/zaf/g711"

	"github.com/earshot-dev/earshot/ingest/codec"
	"github.com/earshot-dev/earshot/ingest/codec/plc"
)

// concealer is a Receiver's last stage before the Writer: channel by
// channel it conceals the frames the mixer marked lost with spandsp's
// packet loss concealment (ingest/codec/plc: the last pitch period
// repeated, faded out over 50 ms at 8 kHz, then for G.711 a noise floor
// rather than digital silence: plc.NewNoiseFloor), fed with the channel's audio
// as received, pads included; and it decodes G.722 to 16 kHz 16-bit PCM.
// G.711 stays bytes: a lost span is the fill encoded in the call's law,
// and the received samples the concealer blends after a loss are
// re-encoded; elsewhere the bytes pass as they came. A G.722 decoder
// still takes a lost span's fill bytes (it resumes from the state they
// leave), but its output there is replaced by the concealer's fill, two
// samples a byte. Without PLC (JitterConfig.Conceal silence) nothing is
// marked lost and nothing is concealed: G.711 passes as it came, G.722 is
// only decoded.
type concealer struct {
	w     Writer
	codec codec.Codec
	plcs  []*plc.Concealer // one a channel; none without PLC
	decs  []codec.Decoder  // G.722's, one a channel; none for G.711
	ch    [][]byte         // a channel's bytes of one write
	lost  [][]byte         // their loss marks
	pcm   [][]int16        // a channel's linear samples of one write
	was   []int16          // G.711 samples as received, before blending
	inGap []bool           // the channel's last frame was concealed
	out   []byte
}

func newConcealer(w Writer, c codec.Codec, channels int, usePLC bool) (*concealer, error) {
	k := &concealer{w: w, codec: c, ch: make([][]byte, channels), lost: make([][]byte, channels),
		pcm: make([][]int16, channels), inGap: make([]bool, channels)}
	for range channels {
		if usePLC {
			// G.711: the fill ends in a noise floor, not digital silence
			// (measured on mu-law, bench/CALLS.md "3 % loss, word by
			// word"); G.722's fades to silence, as its calls' record
			// measured better so.
			newPLC := plc.NewNoiseFloor
			if c.Wideband() {
				newPLC = plc.New
			}
			p, err := newPLC()
			if err != nil {
				k.Close()
				return nil, err
			}
			k.plcs = append(k.plcs, p)
		}
		if c.Wideband() {
			dec, err := codec.NewDecoder(c)
			if err != nil {
				k.Close()
				return nil, err
			}
			k.decs = append(k.decs, dec)
		}
	}
	return k, nil
}

// write takes whole frames (the mixer's output: len(b) is a multiple of
// the channel count) and their loss marks (nil: none lost), conceals,
// decodes, and writes the result. It may rewrite b.
func (k *concealer) write(ctx context.Context, b, lost []byte) error {
	n := len(k.ch)
	b = b[:len(b)-len(b)%n]
	if k.plcs == nil && k.decs == nil {
		return k.w.Write(ctx, b)
	}
	for c := range k.ch {
		k.ch[c], k.lost[c] = k.ch[c][:0], k.lost[c][:0]
	}
	for i, v := range b {
		k.ch[i%n] = append(k.ch[i%n], v)
	}
	if lost != nil {
		for i, v := range lost[:len(b)] {
			k.lost[i%n] = append(k.lost[i%n], v)
		}
	}
	for c := range k.ch {
		var err error
		if k.decs != nil {
			err = k.decode(c)
		} else {
			err = k.conceal711(c)
		}
		if err != nil {
			return err
		}
	}
	if k.decs == nil {
		for i := range b {
			b[i] = k.ch[i%n][i/n]
		}
		return k.w.Write(ctx, b)
	}
	frames := len(k.pcm[0])
	for _, p := range k.pcm[1:] {
		frames = min(frames, len(p))
	}
	k.out = k.out[:0]
	for i := range frames {
		for c := range k.pcm {
			k.out = binary.LittleEndian.AppendUint16(k.out, uint16(k.pcm[c][i]))
		}
	}
	if len(k.out) == 0 {
		return nil
	}
	return k.w.Write(ctx, k.out)
}

// runs calls f for each stretch of channel c's bytes of one kind, lost
// or received, in order.
func (k *concealer) runs(c int, f func(from, to int, lost bool) error) error {
	marks := k.lost[c]
	if len(marks) == 0 {
		return f(0, len(k.ch[c]), false)
	}
	for a := 0; a < len(marks); {
		e := a + 1
		for e < len(marks) && marks[e] == marks[a] {
			e++
		}
		if err := f(a, e, marks[a] != 0); err != nil {
			return err
		}
		a = e
	}
	return nil
}

// conceal711 conceals channel c's lost G.711 bytes in place.
func (k *concealer) conceal711(c int) error {
	b, p := k.ch[c], k.plcs[c]
	pcm := k.pcm[c][:0]
	for _, v := range b {
		pcm = append(pcm, k.decode711(v))
	}
	k.pcm[c] = pcm
	return k.runs(c, func(from, to int, lost bool) error {
		s := pcm[from:to]
		if lost {
			k.inGap[c] = true
			if err := p.Conceal(s); err != nil {
				return fmt.Errorf("rtp: conceal: %w", err)
			}
			for i, v := range s {
				b[from+i] = k.encode711(v)
			}
			return nil
		}
		blend := k.inGap[c]
		k.inGap[c] = false
		if blend {
			k.was = append(k.was[:0], s...)
		}
		if err := p.Received(s); err != nil {
			return fmt.Errorf("rtp: conceal: %w", err)
		}
		if blend {
			for i, v := range s {
				if v != k.was[i] {
					b[from+i] = k.encode711(v)
				}
			}
		}
		return nil
	})
}

// decode decodes channel c's G.722 bytes to k.pcm[c], concealing the lost.
func (k *concealer) decode(c int) error {
	var p *plc.Concealer
	if k.plcs != nil {
		p = k.plcs[c]
	}
	dec, b := k.decs[c], k.ch[c]
	k.pcm[c] = k.pcm[c][:0]
	return k.runs(c, func(from, to int, lost bool) error {
		n0 := len(k.pcm[c])
		if lost {
			var err error
			if k.pcm[c], err = dec.Decode(b[from:to], k.pcm[c]); err != nil {
				return fmt.Errorf("rtp: decode: %w", err)
			}
			k.pcm[c] = k.pcm[c][:n0+2*(to-from)]
			if err := p.Conceal(k.pcm[c][n0:]); err != nil {
				return fmt.Errorf("rtp: conceal: %w", err)
			}
			return nil
		}
		var err error
		if k.pcm[c], err = dec.Decode(b[from:to], k.pcm[c]); err != nil {
			return fmt.Errorf("rtp: decode: %w", err)
		}
		if p == nil {
			return nil
		}
		if err := p.Received(k.pcm[c][n0:]); err != nil {
			return fmt.Errorf("rtp: conceal: %w", err)
		}
		return nil
	})
}

func (k *concealer) decode711(v byte) int16 {
	if k.codec == codec.PCMA {
		return g711.DecodeAlawFrame(v)
	}
	return g711.DecodeUlawFrame(v)
}

func (k *concealer) encode711(v int16) byte {
	if k.codec == codec.PCMA {
		return g711.EncodeAlawFrame(v)
	}
	return g711.EncodeUlawFrame(v)
}

// Close frees the concealers and decoders.
func (k *concealer) Close() {
	for _, p := range k.plcs {
		p.Close()
	}
	for _, dec := range k.decs {
		dec.Close()
	}
}
