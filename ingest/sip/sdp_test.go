package sip

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/pion/sdp/v3"

	"github.com/earshot-dev/earshot/ingest/codec"
)

// baresipOffer is what baresip sends: PCMU PCMA telephone-event, ptime 20,
// RTCP on port+1 (PROTOCOL.md).
const baresipOffer = "v=0\r\no=- 1 2 IN IP4 192.0.2.10\r\ns=-\r\nc=IN IP4 192.0.2.10\r\nt=0 0\r\n" +
	"m=audio 40000 RTP/AVP 0 8 101\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:8 PCMA/8000\r\na=rtpmap:101 telephone-event/8000\r\na=fmtp:101 0-15\r\na=ptime:20\r\na=sendrecv\r\n"

// hdOffer is baresip with its g722 module: G722 after the G.711 laws.
const hdOffer = "v=0\r\no=- 1 2 IN IP4 192.0.2.10\r\ns=-\r\nc=IN IP4 192.0.2.10\r\nt=0 0\r\n" +
	"m=audio 40000 RTP/AVP 0 8 9 101\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:8 PCMA/8000\r\na=rtpmap:9 G722/8000/1\r\na=rtpmap:101 telephone-event/8000\r\na=ptime:20\r\na=sendrecv\r\n"

func TestParseOffer(t *testing.T) {
	pcma, g722 := codec.PCMA, codec.G722
	cases := []struct {
		name    string
		sdp     string
		prefer  *codec.Codec
		err     error
		streams int
		codec   codec.Codec
		pt      uint8
		te      int
		hold    bool
		rtcp    string
	}{
		{"baresip", baresipOffer, nil, nil, 1, codec.PCMU, 0, 101, false, "192.0.2.10:40001"},
		{"prefer on re-invite", baresipOffer, &pcma, nil, 1, codec.PCMA, 8, 101, false, "192.0.2.10:40001"},
		{"dynamic pcma, rtcp attr, inactive",
			"v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\nm=audio 5000 RTP/AVP 96\r\nc=IN IP4 198.51.100.1\r\na=rtpmap:96 pcma/8000/1\r\na=rtcp:6000 IN IP4 198.51.100.2\r\na=inactive\r\n",
			nil, nil, 1, codec.PCMA, 96, -1, true, "198.51.100.2:6000"},
		{"old hold c=0.0.0.0", strings.Replace(baresipOffer, "c=IN IP4 192.0.2.10", "c=IN IP4 0.0.0.0", 1), nil, nil, 1, codec.PCMU, 0, 101, true, "0.0.0.0:40001"},
		{"g729 and opus only",
			"v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\nm=audio 5000 RTP/AVP 18 111\r\na=rtpmap:18 G729/8000\r\na=rtpmap:111 opus/48000/2\r\n",
			nil, ErrNoCodec, 0, 0, 0, 0, false, ""},
		{"g722 preferred whatever its place", hdOffer, nil, nil, 1, codec.G722, 9, 101, false, "192.0.2.10:40001"},
		{"g722 by static type alone",
			"v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\nm=audio 5000 RTP/AVP 0 9\r\n",
			nil, nil, 1, codec.G722, 9, -1, false, "192.0.2.1:5001"},
		{"a g.711 call stays g.711 on re-invite", hdOffer, &pcma, nil, 1, codec.PCMA, 8, 101, false, "192.0.2.10:40001"},
		{"a g.722 call stays g.722 on re-invite", hdOffer, &g722, nil, 1, codec.G722, 9, 101, false, "192.0.2.10:40001"},
		{"a g.722 call refuses a g.711-only re-invite", baresipOffer, &g722, ErrNoCodec, 0, 0, 0, 0, false, ""},
		{"a g.711 call refuses a g.722-only re-invite",
			"v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\nm=audio 5000 RTP/AVP 9\r\n",
			&pcma, ErrNoCodec, 0, 0, 0, 0, false, ""},
		{"g722 at another clock is not g722",
			"v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\nm=audio 5000 RTP/AVP 96 0\r\na=rtpmap:96 G722/16000\r\n",
			nil, nil, 1, codec.PCMU, 0, -1, false, "192.0.2.1:5001"},
		{"garbage", "hello", nil, ErrBadOffer, 0, 0, 0, 0, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, err := parseOffer([]byte(c.sdp), c.prefer)
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("err %v, want %v", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s := o.streams[0]
			if len(o.streams) != c.streams || s.codec != c.codec || s.pt != c.pt || s.tePT != c.te || s.hold() != c.hold || s.rtcp.String() != c.rtcp {
				t.Fatalf("got %d streams %+v", len(o.streams), s)
			}
		})
	}
}

// TestSiprecFamilies: one session has one format, so G.722 is chosen only
// when every stream offers it.
func TestSiprecFamilies(t *testing.T) {
	head := "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\n"
	both := head + "m=audio 5000 RTP/AVP 9 0\r\na=label:1\r\nm=audio 5002 RTP/AVP 9 0\r\na=label:2\r\n"
	mixed := head + "m=audio 5000 RTP/AVP 9 0\r\na=label:1\r\nm=audio 5002 RTP/AVP 8\r\na=label:2\r\n"
	for _, c := range []struct {
		sdp  string
		want []codec.Codec
	}{{both, []codec.Codec{codec.G722, codec.G722}}, {mixed, []codec.Codec{codec.PCMU, codec.PCMA}}} {
		o, err := parseOffer([]byte(c.sdp), nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []codec.Codec
		for _, s := range o.streams {
			got = append(got, s.codec)
			for _, d := range s.codecs {
				if !s.codec.Compatible(d) {
					t.Errorf("stream takes %s beside %s", d, s.codec)
				}
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("streams %v, want %v", got, c.want)
		}
	}
}

func TestAnswerG722(t *testing.T) {
	o, err := parseOffer([]byte(hdOffer), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := o.answer(netip.MustParseAddr("192.0.2.1"), []int{20000}, nil, nil, 7, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "m=audio 20000 RTP/AVP 9 101\r\n") || !strings.Contains(string(b), "a=rtpmap:9 G722/8000\r\n") {
		t.Fatalf("answer does not take G722:\n%s", b)
	}
}

func TestAnswer(t *testing.T) {
	offer := baresipOffer + "m=video 40002 RTP/AVP 96\r\na=rtpmap:96 VP8/90000\r\n"
	o, err := parseOffer([]byte(offer), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := o.answer(netip.MustParseAddr("192.0.2.1"), []int{20000}, nil, nil, 7, 1)
	if err != nil {
		t.Fatal(err)
	}
	var sd sdp.SessionDescription
	if err := sd.Unmarshal(b); err != nil {
		t.Fatalf("answer does not parse: %v\n%s", err, b)
	}
	if len(sd.MediaDescriptions) != 2 {
		t.Fatalf("answer has %d m= lines, want one per offered line", len(sd.MediaDescriptions))
	}
	a, v := sd.MediaDescriptions[0], sd.MediaDescriptions[1]
	if a.MediaName.Port.Value != 20000 || strings.Join(a.MediaName.Formats, " ") != "0 101" || sd.ConnectionInformation.Address.Address != "192.0.2.1" {
		t.Fatalf("audio answer %s", b)
	}
	if _, ok := a.Attribute("recvonly"); !ok {
		t.Fatalf("audio is not recvonly: %s", b)
	}
	if f, _ := a.Attribute("fmtp"); f != "101 0-15" {
		t.Fatalf("telephone-event fmtp %q not echoed", f)
	}
	if v.MediaName.Port.Value != 0 || v.MediaName.Media != "video" {
		t.Fatalf("video not declined: %s", b)
	}
}

// FuzzParseOffer: any body parses or fails with ErrBadOffer/ErrNoCodec,
// never panics, and an accepted offer always yields an answer that parses.
var fuzzDTLS, _ = newDTLSIdentity()

func FuzzParseOffer(f *testing.F) {
	f.Add([]byte(baresipOffer))
	f.Add([]byte(baresipDTLSOffer))
	f.Add([]byte("v=0\r\nm=audio 1 RTP/AVP 8\r\n"))
	f.Add([]byte("v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nc=IN IP6 ::1\r\nt=0 0\r\nm=audio 9 RTP/AVPF 0 0 0\r\na=rtcp:x\r\na=rtcp-mux\r\na=label:1\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := parseOffer(b, nil)
		if err != nil {
			if !errors.Is(err, ErrBadOffer) && !errors.Is(err, ErrNoCodec) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if len(o.streams) == 0 || len(o.streams) > maxStreams {
			t.Fatalf("%d streams", len(o.streams))
		}
		ports := make([]int, len(o.streams))
		// Every line's security is weighed (a DTLS-SRTP line's fingerprint
		// and setup are read), and the answer carries the door's.
		o.secure(mediaPolicy{mode: srtpOptional, keys: true, transport: "TLS"})
		ans, err := o.answer(netip.MustParseAddr("10.0.0.1"), ports, nil, fuzzDTLS, 1, 1)
		if err != nil {
			t.Fatalf("answer: %v", err)
		}
		var sd sdp.SessionDescription
		if err := sd.Unmarshal(ans); err != nil {
			t.Fatalf("our answer does not parse: %v\n%s", err, ans)
		}
	})
}
