package webrtc

import (
	"errors"
	"testing"

	"github.com/earshot-dev/earshot/ingest/codec"
)

const offerHead = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n"

func TestCheckOffer(t *testing.T) {
	tests := []struct {
		name             string
		sdp              string
		want             error
		pcmu, pcma, opus bool
	}{
		{"static PCMU", offerHead + "m=audio 9 UDP/TLS/RTP/SAVPF 0\r\n", nil, true, false, false},
		{"dynamic PCMA by rtpmap", offerHead + "m=audio 9 UDP/TLS/RTP/SAVPF 96\r\na=rtpmap:96 pcma/8000\r\n", nil, false, true, false},
		{"baresip", offerHead + "m=audio 9 RTP/AVP 0 8 101\r\na=rtpmap:101 telephone-event/8000\r\na=ptime:20\r\n", nil, true, true, false},
		{"opus only", offerHead + "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=rtpmap:111 opus/48000/2\r\n", nil, false, false, true},
		{"chromium", offerHead + "m=audio 9 UDP/TLS/RTP/SAVPF 111 63 9 0 8 13 110 126\r\na=rtpmap:111 opus/48000/2\r\na=fmtp:111 minptime=10;useinbandfec=1\r\na=rtpmap:63 red/48000/2\r\na=rtpmap:9 G722/8000\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:8 PCMA/8000\r\na=rtpmap:13 CN/8000\r\na=rtpmap:110 telephone-event/48000\r\na=rtpmap:126 telephone-event/8000\r\na=sendonly\r\n", nil, true, true, true},
		{"G.722 is not a WebRTC codec here", offerHead + "m=audio 9 UDP/TLS/RTP/SAVPF 9\r\n", ErrNoCodec, false, false, false},
		{"PCMU at 16 kHz is not G.711", offerHead + "m=audio 9 UDP/TLS/RTP/SAVPF 96\r\na=rtpmap:96 PCMU/16000\r\n", ErrNoCodec, false, false, false},
		{"recvonly audio", offerHead + "m=audio 9 UDP/TLS/RTP/SAVPF 0\r\na=recvonly\r\n", ErrBadOffer, false, false, false},
		{"session-level inactive", offerHead + "a=inactive\r\nm=audio 9 UDP/TLS/RTP/SAVPF 0\r\n", ErrBadOffer, false, false, false},
		{"rejected m-line", offerHead + "m=audio 0 UDP/TLS/RTP/SAVPF 0\r\n", ErrBadOffer, false, false, false},
		{"video only", offerHead + "m=video 9 UDP/TLS/RTP/SAVPF 96\r\na=rtpmap:96 VP8/90000\r\n", ErrBadOffer, false, false, false},
		{"garbage", "hello", ErrBadOffer, false, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := checkOffer([]byte(tc.sdp))
			if !errors.Is(err, tc.want) {
				t.Fatalf("checkOffer: %v, want %v", err, tc.want)
			}
			if err == nil && (o.has(codec.PCMU) != tc.pcmu || o.has(codec.PCMA) != tc.pcma || o.has(codec.Opus) != tc.opus) {
				t.Errorf("got %s, want pcmu %v pcma %v opus %v", o, tc.pcmu, tc.pcma, tc.opus)
			}
		})
	}
}

// FuzzCheckOffer: any input gets an answer or one of the two offer errors,
// never a panic.
func FuzzCheckOffer(f *testing.F) {
	f.Add([]byte(offerHead + "m=audio 9 UDP/TLS/RTP/SAVPF 0 8\r\na=rtpmap:0 PCMU/8000\r\na=sendonly\r\n"))
	f.Add([]byte(offerHead + "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=rtpmap:111 opus/48000/2\r\n"))
	f.Add([]byte("v=0\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := checkOffer(b)
		if err != nil && !errors.Is(err, ErrBadOffer) && !errors.Is(err, ErrNoCodec) {
			t.Fatalf("unexpected error %v", err)
		}
		if err == nil && len(o) == 0 {
			t.Fatalf("no error but no codec")
		}
	})
}
