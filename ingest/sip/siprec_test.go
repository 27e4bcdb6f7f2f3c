package sip

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const rfc7865Metadata = `<?xml version="1.0" encoding="UTF-8"?>
<recording xmlns='urn:ietf:params:xml:ns:recording:1'>
  <datamode>complete</datamode>
  <session session_id="hVpd7YQgRW2nD22h7q60JQ=="><sipSessionID>ab30317f1a784dc48ff824d0d3715d86;remote=47755a9de7794ba387653f2099600ef2</sipSessionID></session>
  <participant participant_id="srfBElmCRp2QB23b7Mpk0w=="><nameID aor="sip:bob@biloxi.com"><name xml:lang="it">Bob</name></nameID></participant>
  <participant participant_id="zSfPoSvdSDCmU3A3TRDxAw=="><nameID aor="sip:alice@atlanta.com"><name>Alice</name></nameID></participant>
  <stream stream_id="UAAMm5GRQKSCMVvLyl4rFw==" session_id="hVpd7YQgRW2nD22h7q60JQ=="><label>96</label></stream>
  <stream stream_id="i1Pz3to5hGk8fuXl+PbwCw==" session_id="hVpd7YQgRW2nD22h7q60JQ=="><label>97</label></stream>
  <participantstreamassoc participant_id="srfBElmCRp2QB23b7Mpk0w=="><send>i1Pz3to5hGk8fuXl+PbwCw==</send></participantstreamassoc>
  <participantstreamassoc participant_id="zSfPoSvdSDCmU3A3TRDxAw=="><send>UAAMm5GRQKSCMVvLyl4rFw==</send></participantstreamassoc>
</recording>`

func TestSplitBodyAndMetadata(t *testing.T) {
	body := "--XYZ\r\nContent-Type: application/sdp\r\n\r\n" + baresipOffer + "\r\n--XYZ\r\nContent-Type: application/rs-metadata+xml\r\nContent-Disposition: recording-session\r\n\r\n" + rfc7865Metadata + "\r\n--XYZ--\r\n"
	sdpBody, meta, err := splitBody(`multipart/mixed;boundary="XYZ"`, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(sdpBody), "v=0") || !strings.Contains(string(meta), "<recording") {
		t.Fatalf("parts: %q %q", sdpBody, meta)
	}
	md, err := parseMetadata(meta, []string{"96", "97"})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(md.custom([]string{"96", "97"}))
	for _, want := range []string{
		`"siprec_session_id":"ab30317f1a784dc48ff824d0d3715d86;remote=47755a9de7794ba387653f2099600ef2"`,
		`{"aor":"sip:bob@biloxi.com","channel":1,"id":"srfBElmCRp2QB23b7Mpk0w==","name":"Bob"}`,
		`{"aor":"sip:alice@atlanta.com","channel":0,"id":"zSfPoSvdSDCmU3A3TRDxAw==","name":"Alice"}`,
		`{"aor":"sip:alice@atlanta.com","channel":0,"label":"96","name":"Alice","participant":"zSfPoSvdSDCmU3A3TRDxAw=="}`,
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("metadata lacks %s\n%s", want, got)
		}
	}
}

func TestSplitBodyRefuses(t *testing.T) {
	cases := []struct {
		name, ct, body string
		err            error
	}{
		{"text", "text/plain", "hi", ErrUnsupportedMedia},
		{"no boundary", "multipart/mixed", "x", ErrBadOffer},
		{"no sdp part", "multipart/mixed;boundary=b", "--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--\r\n", ErrBadOffer},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, _, err := splitBody(c.ct, []byte(c.body)); !errors.Is(err, c.err) {
				t.Fatalf("err %v, want %v", err, c.err)
			}
		})
	}
}

// FuzzParseMetadata: any XML parses or fails with ErrBadOffer; what it
// keeps is bounded.
func FuzzParseMetadata(f *testing.F) {
	f.Add([]byte(rfc7865Metadata), "96")
	f.Add([]byte(`<recording><participant id="a"><aor>sip:a@b</aor><send>1</send></participant></recording>`), "1")
	f.Fuzz(func(t *testing.T, b []byte, label string) {
		md, err := parseMetadata(b, []string{label, "x"})
		if err != nil {
			if !errors.Is(err, ErrBadOffer) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if len(md.Participants) > maxParticipants {
			t.Fatalf("%d participants", len(md.Participants))
		}
		out, err := json.Marshal(md.custom([]string{label, "x"}))
		if err != nil || len(out) > 64<<10+len(label)*4 {
			t.Fatalf("custom metadata %d bytes: %v", len(out), err)
		}
	})
}
