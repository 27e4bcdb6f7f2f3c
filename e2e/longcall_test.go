package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	pionrtp "github.com/pion/rtp"
)

// longCallConfig routes calls to "longcall" with lifecycle events kept, so
// the record must hold end_session; acknowledgments stay at their
// messages_config default (true), which a call has no client to take.
// The route's callback lets the test pace its RTP on the session's
// progress (see sendMinutes). No batch pass: the record checked is the
// call's own (its messages and live finals), which a pass would replace
// while the test reads it; the pass decoded the 40 minutes again.
const longCallConfig = `
live:
  batch_pass: false
sip:
  listen: 127.0.0.1:0
  rtp_ports: 32000-32099
  allow: [127.0.0.0/8]
  routes:
    - user: longcall
      account: acme
      live:
        language_config: {languages: [en]}
        messages_config: {receive_lifecycle_events: true}
        callback: true
        callback_config: {url: "%s"}
`

// Bounds of the 40-minute call's record (GET /v2/live/{id}). Measured
// 2026-11-24: see the test's log line; before the fix the same call stored
// an acknowledgment per RTP tick (about 170 bytes each, 100,000 for a
// 33-minute call played in real time) and, past 100,000 messages, lost
// post_final_transcript and end_session.
const (
	longCallMinutes   = 40
	longCallSpeedup   = 25        // RTP sent 25 times faster than real time
	longCallBurst     = 10        // packets sent back to back when due (8 ms apart at 25x)
	longCallMaxRecord = 256 << 10 // bytes; measured 94 KB
)

// TestSIPLongCall places a 40-minute call through the SIP door (RTP paced
// faster than real time by the test's own sender over a real SIP dialog):
// a spoken sentence every minute, silence between. Its record keeps
// post_final_transcript and end_session, holds no acknowledgment (nobody
// asked: a call has no WebSocket client), keeps every minute's transcript
// and stays under longCallMaxRecord.
func TestSIPLongCall(t *testing.T) {
	t.Parallel() // waits more than it computes: see doc.go
	heardMinute := make(chan int, 4*longCallMinutes)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Event   string `json:"event"`
			Payload struct {
				Data struct {
					IsFinal   bool `json:"is_final"`
					Utterance struct {
						Start float64 `json:"start"`
					} `json:"utterance"`
				} `json:"data"`
			} `json:"payload"`
		}
		if json.NewDecoder(r.Body).Decode(&body) == nil && body.Event == "live.transcript" && body.Payload.Data.IsFinal {
			heardMinute <- int(body.Payload.Data.Utterance.Start) / 60
		}
	}))
	defer cb.Close()
	d, addr := startSIPDaemon(t, telephoneModel(t)+fmt.Sprintf(longCallConfig, cb.URL))
	key := createKey(t, d.DataDir, "acme")
	p := newPhone(t, addr)
	// A short sentence a minute keeps the decoding light enough for a
	// loaded 2-core host at this speed-up (the door drops audio a session
	// is more than 10 s of wall time behind on, as it must for a real call).
	speech, _ := g711(t, "pocketsphinx-goforward.wav", "mulaw")
	const minute = 60 * 8000
	audio := make([]byte, 0, longCallMinutes*minute)
	for range longCallMinutes {
		seg := bytes.Repeat([]byte{0xFF}, minute) // mu-law digital silence
		copy(seg[5*8000:], speech)
		audio = append(audio, seg...)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	conn, port := udpPair(t)
	dlg, code := p.call(ctx, "longcall", "application/sdp", offerSDP([]int{port}, "0 101", "sendrecv", false))
	if code != 200 {
		t.Fatalf("INVITE answered %d", code)
	}
	callID := dlg.InviteRequest.CallID().Value()
	addrs, pts, _, _ := answered(t, dlg.InviteResponse.Body())
	start := time.Now()
	sendMinutes(t, ctx, conn, addrs[0], pts[0], audio, heardMinute)
	t.Logf("%d minutes of RTP sent in %s", longCallMinutes, time.Since(start).Round(time.Second))
	if err := dlg.Bye(ctx); err != nil {
		t.Fatalf("bye: %v", err)
	}
	job := liveJobByCall(t, d, key, callID, 5*time.Minute)
	t.Log(d.WaitLog(10*time.Second, "sip call ended", callID))
	if job["status"] != "done" {
		t.Fatalf("job %v: %v", job["status"], job["error_code"])
	}
	id := job["id"].(string)
	status, record := d.do("GET", "/v2/live/"+id, key, nil, "", nil)
	if status != 200 {
		t.Fatalf("GET /v2/live/%s: %d", id, status)
	}

	var rec struct {
		Result struct {
			Messages      []string `json:"messages"`
			Transcription struct {
				Utterances []struct {
					Start float64 `json:"start"`
					Text  string  `json:"text"`
				} `json:"utterances"`
			} `json:"transcription"`
		} `json:"result"`
	}
	if err := json.Unmarshal(record, &rec); err != nil {
		t.Fatal(err)
	}
	types := map[string]int{}
	var order []string
	for _, m := range rec.Result.Messages {
		var h struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(m), &h); err != nil {
			t.Fatalf("result.messages entry %.100s: %v", m, err)
		}
		types[h.Type]++
		order = append(order, h.Type)
	}
	t.Logf("record %d bytes, %d messages %v", len(record), len(rec.Result.Messages), types)
	if n := len(order); n < 2 || order[n-2] != "post_final_transcript" || order[n-1] != "end_session" {
		t.Errorf("record does not end with post_final_transcript, end_session: ...%v", order[max(0, len(order)-4):])
	}
	if types["audio_chunk"] > 0 || types["stop_recording"] > 0 {
		t.Errorf("record keeps %d audio_chunk and %d stop_recording acknowledgments nobody asked for", types["audio_chunk"], types["stop_recording"])
	}
	if len(record) > longCallMaxRecord {
		t.Errorf("record of a %d-minute call is %d bytes > %d", longCallMinutes, len(record), longCallMaxRecord)
	}
	// Every minute's sentence was heard, the last one too.
	heard := map[int]bool{}
	for _, u := range rec.Result.Transcription.Utterances {
		heard[int(u.Start)/60] = true
	}
	for i := range longCallMinutes {
		if !heard[i] {
			t.Errorf("no utterance in minute %d of %d", i, longCallMinutes)
		}
	}
	if !strings.Contains(fmt.Sprint(rec.Result.Transcription.Utterances), "forward") {
		t.Errorf("no \"forward\" in the transcript: %.300v", rec.Result.Transcription.Utterances)
	}
	// The whole call was taken in: the stored audio is what was sent.
	ch, stored := storedAudio(t, d, key, id)
	if ch != 1 || len(stored) < len(audio) || !bytes.Equal(stored[:len(audio)], audio) {
		t.Errorf("stored %d channels, %d bytes; sent %d (equal prefix: %v)", ch, len(stored), len(audio), len(stored) >= len(audio) && bytes.Equal(stored[:len(audio)], audio))
	}
}

// sendMinutes streams the call's audio minute by minute as 20 ms packets of
// one RTP stream, longCallSpeedup times faster than real time: the packets
// are due on a schedule and sent in bursts of longCallBurst when due (a
// ticker per packet, 0.8 ms, loses ticks on a loaded host and stretched the
// 96 s of sending to over 3 minutes in CI). Before minute i+1 it waits until
// a final transcript of minute i came back by callback, so the session is
// never more than a minute of audio behind; that wait is not counted in the
// schedule.
func sendMinutes(t *testing.T, ctx context.Context, conn *net.UDPConn, dst *net.UDPAddr, pt uint8, audio []byte, heard <-chan int) {
	t.Helper()
	const minute = 60 * 8000
	packet := 20 * time.Millisecond / longCallSpeedup
	seq, done := uint16(7000), -1
	var waited time.Duration
	for m := 0; m*minute < len(audio); m++ {
		w := time.Now()
		for done < m-1 {
			select {
			case got := <-heard:
				done = max(done, got)
			case <-ctx.Done():
				t.Fatalf("no final transcript of minute %d came back before minute %d was sent", m-1, m)
			}
		}
		waited += time.Since(w)
		start := time.Now()
		for k, i := 0, m*minute; i < min((m+1)*minute, len(audio)); k, i = k+1, i+160 {
			if k%longCallBurst == 0 {
				time.Sleep(time.Until(start.Add(time.Duration(k) * packet)))
			}
			p := pionrtp.Packet{Header: pionrtp.Header{Version: 2, PayloadType: pt, SequenceNumber: seq, Timestamp: uint32(i), SSRC: 0x4040}, Payload: audio[i:min(i+160, len(audio))]}
			b, err := p.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			conn.WriteToUDP(b, dst)
			seq++
		}
	}
	t.Logf("waited %s in all for the previous minute's final", waited.Round(time.Millisecond))
}
