package codec

import (
	"testing"

	"github.com/earshot-dev/earshot/ingest/media"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		pt     int
		rtpmap string
		mapped bool
		want   Codec
	}{
		{0, "", false, PCMU},
		{8, "", false, PCMA},
		{9, "", false, G722},
		{18, "", false, None},
		{96, "pcma/8000", true, PCMA},
		{96, "PCMU/8000/1", true, PCMU},
		{9, "G722/8000", true, G722},
		{9, "G722/8000/1", true, G722},
		{9, "G722/16000", true, None}, // the RFC 3551 clock is 8000 whatever the audio
		{111, "opus/48000/2", true, Opus},
		{111, "OPUS/48000/2", true, Opus},
		{111, "opus/48000", true, None}, // RFC 7587 requires /2
		{96, "PCMU/16000", true, None},
		{0, "G729/8000", true, None}, // the rtpmap rules over the static number
		{101, "telephone-event/8000", true, None},
		{96, " ", true, None},
	}
	for _, tc := range tests {
		if got := Lookup(tc.pt, tc.rtpmap, tc.mapped); got != tc.want {
			t.Errorf("Lookup(%d, %q, %v) = %s, want %s", tc.pt, tc.rtpmap, tc.mapped, got, tc.want)
		}
	}
}

func TestTable(t *testing.T) {
	for _, c := range []Codec{PCMU, PCMA, G722, Opus} {
		pt, static := c.StaticPT()
		if static && Lookup(int(pt), "", false) != c {
			t.Errorf("%s: static type %d does not look up", c, pt)
		}
		if Lookup(96, c.RTPMap(), true) != c {
			t.Errorf("%s: its own rtpmap %q does not look up", c, c.RTPMap())
		}
		f := c.Format(1)
		if err := f.Validate(); err != nil {
			t.Errorf("%s: format %+v: %v", c, f, err)
		}
		if c.Wideband() != (f.SampleRate == 16000 && f.Encoding == media.LinearPCM) || c.Wideband() == c.G711() {
			t.Errorf("%s: wideband %v but format %+v", c, c.Wideband(), f)
		}
		if wide := map[bool]Codec{true: c, false: Opus}[c.Wideband()]; ForFormat(f, wide) != c {
			t.Errorf("%s: ForFormat(%+v) = %s", c, f, ForFormat(f, wide))
		}
	}
	if PCMU.Compatible(G722) || G722.Compatible(Opus) || !PCMU.Compatible(PCMA) || !G722.Compatible(G722) {
		t.Error("Compatible: a session's format must not change")
	}
	if ForFormat(media.Format{Encoding: media.LinearPCM, BitDepth: 16, SampleRate: 16000, Channels: 1}, None) != None {
		t.Error("16 kHz PCM is no codec's without a wideband codec")
	}
	if Codec(-1).String() != "none" || Codec(99).ClockRate() != 0 {
		t.Error("out-of-range codecs are None")
	}
}

func TestNewDecoder(t *testing.T) {
	for _, c := range []Codec{PCMU, PCMA, None} {
		if _, err := NewDecoder(c); err == nil {
			t.Errorf("%s has a door decoder", c)
		}
	}
	for _, c := range []Codec{G722, Opus} {
		d, err := NewDecoder(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Decode([]byte{1, 2, 3}, nil); err == nil {
			t.Errorf("%s decodes after Close", c)
		}
		if err := d.Close(); err != nil {
			t.Errorf("%s: second Close: %v", c, err)
		}
	}
}
