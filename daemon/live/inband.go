package live

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/ingest/dtmf"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/zaf/g711"
)

// In-band DTMF (pci.inband_dtmf; PROTOCOL.md, DTMF keys). A session of
// telephone audio with the switch on runs each channel's samples, at the
// session's own rate, through a dtmf.Filter before anything else sees
// them: the filter delays them by its lookahead (51 ms) and replaces a
// key's tone with silence from its onset. What it passes on is what the
// recording stores (the bytes as they came, delayed as much, a removed
// tone's samples replaced with the encoding's digital silence, the
// timeline kept, as a pause stores it) and what the recogniser hears
// (resampled to 16 kHz). Each key
// goes to the session as an ingest.KeyInband key at its onset. The delay
// is drained into the recording at the end and before a reconnected
// client's resend is checked against the stored tail.

// inband is a session's detectors, owned by its goroutine.
type inband struct {
	format  media.Format
	filters []*dtmf.Filter     // one per channel
	rs      []*media.Resampler // to 16 kHz; nil when the session is at 16 kHz
	out     [][]int16          // each channel's filtered samples of one write
	pcm     [][]int16          // the same at 16 kHz, for the recogniser
	f32     []float32
	held    []byte // the frames taken in and not passed on yet (the lookahead and a write)
	frames  []byte // the frames passed on: what the recording stores
	silence []byte // one sample of digital silence in the session's encoding
	keys    []dtmf.Key
	// base is the samples per channel the filters before the current
	// ones took (flush starts new ones), written those the current took:
	// a key's time counts from the session's first sample.
	base, written int64
	// last is the last key handed on: the same tone found on another
	// channel (a recorded call's other leg hears it as echo) is dropped.
	last dtmf.Key
	// taken is the session's key count after the last in-band key it
	// took: a count past it means a key came from the door (RFC 4733,
	// SIP INFO), and from then on in-band keys are not handed on.
	taken int
}

// newInband makes the detectors for a session of format f (one the
// detector takes: params.Live.InbandFormat).
func newInband(f media.Format) (*inband, error) {
	ib := &inband{format: f, out: make([][]int16, f.Channels), pcm: make([][]int16, f.Channels),
		silence: encodeSample(nil, f.Encoding, 0)}
	for range f.Channels {
		fl, err := dtmf.New(f.SampleRate)
		if err != nil {
			return nil, fmt.Errorf("in-band DTMF: %w", err)
		}
		ib.filters = append(ib.filters, fl)
		if f.SampleRate != recognizer.SampleRate {
			r, err := media.NewResampler(f.SampleRate, recognizer.SampleRate)
			if err != nil {
				return nil, fmt.Errorf("in-band DTMF: %w", err)
			}
			ib.rs = append(ib.rs, r)
		}
	}
	return ib, nil
}

// write filters whole frames (their bytes, and their samples at the
// session's rate, one slice per channel) and returns the frames to store,
// the samples for the recogniser (16 kHz) and the keys that ended. Every
// channel is written the same count, so the filters return the same
// count. The results are reused by the next call.
func (ib *inband) write(whole []byte, pcm [][]int16) ([]byte, [][]int16, []dtmf.Key) {
	ib.held = append(ib.held, whole...)
	ib.keys = ib.keys[:0]
	for c, fl := range ib.filters {
		out, keys := fl.Write(pcm[c])
		ib.out[c] = append(ib.out[c][:0], out...)
		ib.keep(keys)
	}
	ib.written += int64(len(pcm[0]))
	return ib.pass(false)
}

// flush passes on what the filters still hold (the session's end, or a
// reconnect) and starts new ones.
func (ib *inband) flush() ([]byte, [][]int16, []dtmf.Key) {
	ib.keys = ib.keys[:0]
	for c, fl := range ib.filters {
		out, keys := fl.Flush()
		ib.out[c] = append(ib.out[c][:0], out...)
		ib.keep(keys)
		ib.filters[c], _ = dtmf.New(ib.format.SampleRate) // the rate New took before
	}
	ib.base += ib.written
	ib.written = 0
	return ib.pass(true)
}

// keep adds a filter's keys, their start counted from the session's
// first sample.
func (ib *inband) keep(keys []dtmf.Key) {
	for _, k := range keys {
		k.Start += ib.base
		ib.keys = append(ib.keys, k)
	}
}

// pass takes the frames the filters passed on (ib.out) from the held
// bytes, a removed sample's replaced by silence, and resamples the samples
// for the recogniser (with the resamplers' tail when last). A sample the
// filter passed on as 0 was removed unless its bytes already decode to 0
// (mu-law has two such codes): the stored bytes are those that came.
func (ib *inband) pass(last bool) ([]byte, [][]int16, []dtmf.Key) {
	fs := ib.format.FrameSize()
	bps := len(ib.silence)
	n := len(ib.out[0])
	ib.frames = append(ib.frames[:0], ib.held[:n*fs]...)
	ib.held = ib.held[:copy(ib.held, ib.held[n*fs:])]
	for i := range n {
		for c := range ib.out {
			if b := ib.frames[i*fs+c*bps : i*fs+(c+1)*bps]; ib.out[c][i] == 0 && !decodesToZero(ib.format.Encoding, b) {
				copy(b, ib.silence)
			}
		}
	}
	for c, x := range ib.out {
		if ib.rs == nil {
			ib.pcm[c] = append(ib.pcm[c][:0], x...)
			continue
		}
		ib.f32 = ib.f32[:0]
		for _, v := range x {
			ib.f32 = append(ib.f32, float32(v)/32768)
		}
		f := ib.rs[c].Process(ib.f32, nil)
		if last {
			f = ib.rs[c].Flush(f)
		}
		ib.pcm[c] = media.ToInt16(f, ib.pcm[c][:0])
	}
	return ib.frames, ib.pcm, ib.keys
}

// decodesToZero reports whether sample bytes b of encoding e decode to 0.
func decodesToZero(e media.Encoding, b []byte) bool {
	switch e {
	case media.MuLaw:
		return b[0] == 0xff || b[0] == 0x7f
	case media.ALaw:
		return false // its smallest codes are ±8
	}
	return b[0] == 0 && b[1] == 0
}

// encodeSample appends x in encoding e: G.711 mu-law or A-law, or 16-bit
// little-endian PCM.
func encodeSample(b []byte, e media.Encoding, x int16) []byte {
	switch e {
	case media.MuLaw:
		return append(b, g711.EncodeUlawFrame(x))
	case media.ALaw:
		return append(b, g711.EncodeAlawFrame(x))
	}
	return binary.LittleEndian.AppendUint16(b, uint16(x))
}

// inbandPass takes the whole frames the session took in and their samples
// at the session's rate, and, with in-band DTMF on, returns what the
// filters pass on instead (whole and pcm unchanged when it is off). The
// keys they found wait for inbandKeys, which write calls once these frames
// are stored and queued: a key may pause the session (pci.pause_sequence).
func (s *session) inbandPass(whole []byte, pcm [][]int16) ([]byte, [][]int16) {
	if s.inband == nil {
		return whole, pcm
	}
	frames, out, _ := s.inband.write(whole, pcm)
	return frames, out
}

// drainInband stores what the filters hold and hands it to the recogniser
// (the session's end, a reconnect); nothing when in-band DTMF is off.
func (s *session) drainInband() error {
	if s.inband == nil {
		return nil
	}
	frames, out, _ := s.inband.flush()
	if len(frames) > 0 {
		if err := s.rec.write(frames); err != nil {
			return err
		}
		s.shared.wrote(media.WAVHeaderSize + s.rec.audio)
		s.queue(out)
	}
	s.inbandKeys()
	return nil
}

// inbandKeys hands the session the keys the filters found in the last
// write or flush (none when in-band DTMF is off), at their onset, once
// each: a tone found on two channels at once is one key. A call whose
// keys come out of band as well (a key from the door since the last
// in-band one) has its in-band keys dropped from then on: a device that
// sends both would have every key twice. Their tones are removed all the
// same.
func (s *session) inbandKeys() {
	ib := s.inband
	if ib == nil {
		return
	}
	keys := ib.keys
	ib.keys = ib.keys[:0] // handed on once
	slices.SortFunc(keys, func(a, b dtmf.Key) int { return cmp.Compare(a.Start, b.Start) })
	for _, k := range keys {
		if k.Digit == ib.last.Digit && k.Start < ib.last.Start+ib.last.Duration && ib.last.Start < k.Start+k.Duration {
			continue // the same tone on another channel
		}
		ib.last = k
		if s.keys.count > ib.taken {
			continue // the door's keys: these are their tones
		}
		at, d := k.Seconds(s.format.SampleRate)
		s.key(ingest.Key{Digit: k.Digit, Duration: d, Source: ingest.KeyInband}, at)
		ib.taken = s.keys.count
	}
}
