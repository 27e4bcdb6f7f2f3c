package webrtc

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pion/rtp"
	pionwebrtc "github.com/pion/webrtc/v4"

	"github.com/earshot-dev/earshot/ingest"
)

// rawTrack is a local track that can also write packets as they are
// (writeRaw: the payload type kept), which TrackLocalStaticRTP rewrites.
type rawTrack struct {
	*pionwebrtc.TrackLocalStaticRTP
	once  sync.Once
	bound chan struct{}
	ctx   pionwebrtc.TrackLocalContext
}

func (r *rawTrack) Bind(ctx pionwebrtc.TrackLocalContext) (pionwebrtc.RTPCodecParameters, error) {
	c, err := r.TrackLocalStaticRTP.Bind(ctx)
	if err == nil {
		r.once.Do(func() {
			r.ctx = ctx
			close(r.bound)
		})
	}
	return c, err
}

// writeRaw sends one packet with its own payload type on the track's SSRC.
func (r *rawTrack) writeRaw(t *testing.T, pt uint8, seq uint16, ts uint32, payload []byte) {
	t.Helper()
	<-r.bound
	h := rtp.Header{Version: 2, PayloadType: pt, SequenceNumber: seq, Timestamp: ts, SSRC: uint32(r.ctx.SSRC())}
	if _, err := r.ctx.WriteStream().WriteRTP(&h, payload); err != nil {
		t.Fatal(err)
	}
}

// keySession is a recSession that takes keys.
type keySession struct {
	*recSession
	keys chan ingest.Key
}

func (s *keySession) Key(_ context.Context, k ingest.Key) error {
	s.keys <- k
	return nil
}

// TestOfferDTMF: a WHIP offer with telephone-event/8000 beside PCMU gets
// it in the answer, and the events the peer sends become the session's
// keys, one per event (the repeated end packets dropped), an event of a
// payload type not negotiated none; the audio around them is the
// session's as before.
func TestOfferDTMF(t *testing.T) {
	rec := newRecSession("s1", ulaw8k)
	s := &keySession{recSession: rec, keys: make(chan ingest.Key, 16)}
	d := newDoor(t, 10*time.Second)
	d.att.(*sessions).m["s1"] = rec
	d.att.(*sessions).keyed = s
	te := pionwebrtc.RTPCodecParameters{RTPCodecCapability: pionwebrtc.RTPCodecCapability{MimeType: mimeTelephoneEvent, ClockRate: 8000, Channels: 1, SDPFmtpLine: "0-16"}, PayloadType: 101}
	o, offer := newOfferer(t, pcmuParams, te)
	answer, _, err := d.Offer(t.Context(), "s1", "s1.1.good", "127.0.0.1:1", offer)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(answer), "telephone-event/8000") {
		t.Fatalf("answer without telephone-event:\n%s", answer)
	}
	o.answer(t, answer)
	seq, ts := uint16(100), uint32(8000)
	audio := func() {
		o.track.writeRaw(t, 0, seq, ts, bytes.Repeat([]byte{0x7f}, 160))
		seq, ts = seq+1, ts+160
	}
	key := func(pt, code uint8) {
		start := ts
		for i, end := range []bool{false, false, true, true, true} {
			o.track.writeRaw(t, pt, seq, start, []byte{code, map[bool]byte{true: 0x8a, false: 0x0a}[end], 0, byte(160 * (i + 1) / 2)})
			seq++
			audio()
		}
	}
	audio()
	rec.waitBytes(t, 160)
	key(101, 7)
	key(102, 3) // not negotiated: no key
	key(101, 11)
	audio()
	for _, want := range []byte{'7', '#'} {
		select {
		case k := <-s.keys:
			if k.Digit != want || k.Source != ingest.KeyRFC4733 || k.Duration <= 0 {
				t.Errorf("key %+v, want %c", k, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no key %c within 10 s", want)
		}
	}
	rec.waitBytes(t, 17*160)
	select {
	case k := <-s.keys:
		t.Errorf("a key more: %+v", k)
	default:
	}
}
