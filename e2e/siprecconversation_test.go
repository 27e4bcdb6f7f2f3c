package e2e

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	sipmsg "github.com/emiago/sipgo/sip"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// werConversation bounds the stored record of TestSIPRECConversation: both
// channels' word errors over both channels' reference words. Measured
// 2026-11-29 (two runs on a loaded 2-CPU box): 0.341 (14 errors in 41
// words, 7 per channel) both times; the bound adds 0.10 (4 words) for
// the loss pattern meeting other words and a batch segmentation moved by
// a few frames.
const werConversation = 0.341 + 0.10

// TestSIPRECConversation: a two-party call as a SIPREC recorder sends it,
// two labelled PCMU streams, each leg one speaker of real speech (two
// LibriSpeech utterances of reader 1089; two of the Sense and Sensibility
// reader), taking turns with gaps of 0.8 and 1.2 s and one overlap of
// 0.3 s, each leg silent while the other talks, at real time with one
// packet in 67 lost. The stored record, once the batch pass has replaced
// the live result, holds each leg's words on its own channel, within
// werConversation of the references.
func TestSIPRECConversation(t *testing.T) {
	d, addr := startSIPDaemon(t, fmt.Sprintf(sipConfig, "30s", "0s")+telephoneModel(t))
	key := createKey(t, d.DataDir, "acme")
	p := newPhone(t, addr)
	p.tcp = true // the multipart INVITE is larger than a UDP datagram may be
	type turn struct {
		leg   int
		file  string
		after float64 // seconds after the previous turn's end (negative: overlap)
	}
	turns := []turn{
		{0, "ls-test-clean-1089-134691-0001.wav", 0.5},
		{1, "librivox-sense-and-sensibility-01-0880.wav", 0.8},
		{0, "ls-test-clean-1089-134686-0001.wav", -0.3},
		{1, "librivox-sense-and-sensibility-01-0930.wav", 1.2},
	}
	const rate = 8000 // mu-law bytes per second
	var legs [2][]byte
	var refs [2][]string
	at := 0
	for _, tr := range turns {
		audio, ref := g711(t, tr.file, "mulaw")
		at += int(tr.after * rate)
		for len(legs[tr.leg]) < at+len(audio) {
			legs[tr.leg] = append(legs[tr.leg], 0xFF) // mu-law silence
		}
		copy(legs[tr.leg][at:], audio)
		refs[tr.leg] = append(refs[tr.leg], ref)
		at += len(audio)
	}
	end := at + rate // a second of silence after the last turn
	for i := range legs {
		legs[i] = append(legs[i], bytes.Repeat([]byte{0xFF}, end-len(legs[i]))...)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	connA, portA := udpPair(t)
	connB, portB := udpPair(t)
	body := siprecBody(offerSDP([]int{portA, portB}, "0 101", "sendonly", true))
	dlg, code := p.call(ctx, "transcribe", "multipart/mixed;boundary=b0undary", []byte(body), sipmsg.NewHeader("Require", "siprec"))
	if code != 200 {
		t.Fatalf("SIPREC INVITE answered %d", code)
	}
	addrs, _, _, _ := answered(t, dlg.InviteResponse.Body())
	if len(addrs) != 2 {
		t.Fatalf("answer has %d streams", len(addrs))
	}
	done := make(chan struct{})
	go func() { defer close(done); sendRTP(t, connB, addrs[1], 0, legs[1], 1, impair{drop: 67}, 0xB) }()
	sendRTP(t, connA, addrs[0], 0, legs[0], 1, impair{drop: 67}, 0xA)
	<-done
	job := siprecJob(t, ctx, d, key, dlg)
	id := job["id"].(string)
	for deadline := time.Now().Add(batchPassWait); ; {
		md, _ := job["post_session_metadata"].(map[string]any)
		if md["transcription_pass"] == "batch" {
			break
		}
		if md["batch_pass"] != "pending" || time.Now().After(deadline) {
			t.Fatalf("batch pass %v %v", md["batch_pass"], md["batch_pass_error"])
		}
		time.Sleep(200 * time.Millisecond) // polling a real process, not settling
		job = nil
		if status, b := d.do("GET", "/v2/live/"+id, key, nil, "", &job); status != 200 {
			t.Fatalf("GET live: %d %s", status, b)
		}
	}
	errs, words := 0, 0
	for ch, ref := range refs {
		want := recognizertest.Normalize(strings.Join(ref, " "))
		text := channelText(job, ch)
		e := recognizertest.EditDistance(want, recognizertest.Normalize(text))
		t.Logf("channel %d: %d errors in %d words: %s", ch, e, len(want), text)
		if text == "" {
			t.Errorf("channel %d has no words in the record", ch)
		}
		errs, words = errs+e, words+len(want)
	}
	if wer := float64(errs) / float64(words); wer > werConversation {
		t.Errorf("stored record WER %.3f > %.3f", wer, werConversation)
	} else {
		t.Logf("stored record WER %.3f (bound %.3f)", wer, werConversation)
	}
}
