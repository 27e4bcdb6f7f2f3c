package e2e

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/recognizer/recognizertest"
)

// liveFairnessConfig makes a channel that finds no decoder give up soon
// (decoder_wait), so that a decoder shortage shows as error messages at
// once; startDaemon's --decoders 2 sizes the live pools (the wideband live
// pool, which 16 kHz sessions decode on, is 4 x 2 = 8 decoders).
const liveFairnessConfig = `
live:
  decoder_wait: 200ms
`

// livePoolBusy is the wideband live pool's decoders checked out now
// (earshot_decoders).
func livePoolBusy(t *testing.T, d *daemonProc) int {
	t.Helper()
	n, _ := metricValue(t, d, `earshot_decoders{pool="live",state="busy"}`)
	return int(n)
}

// interleave makes channels channels of 16-bit PCM, each the mono pcm.
func interleave(pcm []byte, channels int) []byte {
	var out bytes.Buffer
	out.Grow(len(pcm) * channels)
	for i := 0; i+1 < len(pcm); i += 2 {
		for range channels {
			out.Write(pcm[i : i+2])
		}
	}
	return out.Bytes()
}

// tenantRun streams a hog's multichannel session (hogURL, hogChannels
// channels of about 22 s of speech, at real time) and, once the hog's
// channels hold decoders of the live pool, another account's mono
// session (bobURL: ls-test-clean-1089-134686-0000, 28 words, at real time)
// beside it. It returns both sessions' views and bob's WER.
func tenantRun(t *testing.T, d *daemonProc, hogURL string, hogChannels int, bobURL string) (hog, bob liveView, bobWER float64) {
	t.Helper()
	first, _ := clip(t, "ls-dev-clean-2412-153948-0000.wav")
	second, _ := clip(t, "ls-test-clean-1089-134686-0000.wav")
	hogAudio := interleave(append(pcmOf(t, first), pcmOf(t, second)...), hogChannels)
	bobPath, bobRef := clip(t, "ls-test-clean-1089-134686-0000.wav")
	bobAudio := pcmOf(t, bobPath)

	var wg sync.WaitGroup
	var hogMsgs []liveMsg
	wg.Go(func() { hogMsgs, _ = runSession(t, hogURL, hogAudio, 32*hogChannels, 100*time.Millisecond) })
	// Bob starts once the hog's channels have taken their decoders (a
	// channel's first decode waits for 1.5 s of its audio): the hog came
	// first, as in the probe.
	for deadline := time.Now().Add(30 * time.Second); livePoolBusy(t, d) < 4; {
		if time.Now().After(deadline) {
			t.Fatalf("the hog's %d channels hold %d decoders of the live pool after 30s", hogChannels, livePoolBusy(t, d))
		}
		time.Sleep(50 * time.Millisecond) // polling interval against a real process
	}
	t.Logf("bob starts with %d live decoders busy", livePoolBusy(t, d))
	bobMsgs, code := runSession(t, bobURL, bobAudio, 32, 100*time.Millisecond)
	wg.Wait()
	hog, bob = viewLive(t, hogMsgs), viewLive(t, bobMsgs)
	var texts []string
	for _, f := range bob.finals {
		texts = append(texts, f.Text)
	}
	rw := recognizertest.Normalize(bobRef)
	bobWER = float64(recognizertest.EditDistance(rw, recognizertest.Normalize(strings.Join(texts, " ")))) / float64(len(rw))
	t.Logf("hog: %d finals, %d error messages %q; bob: close %d, %d finals, WER %.3f, %d error messages %q",
		len(hog.finals), len(hog.errors), hog.errors[:min(1, len(hog.errors))], code, len(bob.finals), bobWER, len(bob.errors), bob.errors)
	if code != 1000 {
		t.Errorf("bob's session closed with %d, want 1000", code)
	}
	return hog, bob, bobWER
}

// TestLiveChannelsPerAccount (issue 43, finding 4): channels count
// against an account's live limit (live.max_channels_per_account, here
// 3): a session with more channels than the limit, or one that would take
// the account's open channels past it, is refused with 429 naming the key,
// while another account is admitted; a session ended gives its channels
// back. Before, only sessions were counted (live.max_sessions_per_account),
// so one account's 8-channel sessions took 8 times what a mono one did.
func TestLiveChannelsPerAccount(t *testing.T) {
	d := startDaemon(t, "", "live:\n  max_channels_per_account: 3\n")
	alice := createKey(t, d.DataDir, "alice")
	bob := createKey(t, d.DataDir, "bob")
	refused := func(channels int, what string) {
		t.Helper()
		var eb errBody
		status, body := d.postJSON("/v2/live", alice, map[string]any{"channels": channels}, &eb)
		checkError(t, status, eb, 429, what)
		if !strings.Contains(eb.Message, "live.max_channels_per_account") {
			t.Errorf("%s: %d %s, want it to name live.max_channels_per_account", what, status, body)
		}
	}
	refused(4, "a session of 4 channels with a limit of 3")
	two := d.createLive(alice, map[string]any{"channels": 2})
	refused(2, "2 channels beside 2 open")
	d.createLive(alice, map[string]any{})
	refused(1, "a 4th channel")
	d.createLive(bob, map[string]any{"channels": 3}) // another account has its own

	if status, body := d.do("DELETE", "/v2/live/"+two.ID, alice, nil, "", nil); status != 202 {
		t.Fatalf("DELETE /v2/live/%s: %d %s", two.ID, status, body)
	}
	d.createLive(alice, map[string]any{"channels": 2}) // the ended session's channels are free again
}

// TestLiveTenantsShareDecoders (issue 43, finding 4): one account's
// channels cannot take another's live decoders. With --decoders 2 the
// wideband live pool has 8 decoders; by default an account may have 8
// live channels (the pool's size, live.max_channels_per_account) and hold
// half of the pool while they talk (live.decoder_share 0.5). Alice's
// 8-channel session is admitted, a 9th channel of hers is refused with
// 429, and beside her 8 talking channels bob's mono session gets every
// final with no error message, while alice's channels past her share are
// told so. Before (the probe: bob got 8 "service at capacity ... no
// decoder available" errors and 10 finals instead of 18), alice's 9th
// channel was admitted, her 8 channels held the whole pool and bob's
// utterances found no decoder.
func TestLiveTenantsShareDecoders(t *testing.T) {
	// The pool loaded before the sessions, as the shipped daemon's. No
	// batch pass: the live finals and error messages are what is checked,
	// and the two sessions' passes (8 channels of 22 s and 10 s) were
	// decoded after them for no check.
	d := startDaemon(t, "", liveFairnessConfig+"  batch_pass: false\n", warmPools...)
	alice := createKey(t, d.DataDir, "alice")
	bob := createKey(t, d.DataDir, "bob")
	waitLoaded(t, d)

	big := d.createLive(alice, map[string]any{"channels": 8})
	var eb errBody
	status, body := d.postJSON("/v2/live", alice, map[string]any{}, &eb)
	if status == 201 {
		t.Errorf("a 9th live channel of one account with the live pool of 8: 201 %s, want 429", body)
	} else {
		checkError(t, status, eb, 429, "POST /v2/live of a 9th channel")
		if !strings.Contains(eb.Message, "live.max_channels_per_account") {
			t.Errorf("a 9th channel refused with %q, want it to name live.max_channels_per_account", eb.Message)
		}
	}
	other := d.createLive(bob, map[string]any{})

	hog, v, wer := tenantRun(t, d, big.URL, 8, other.URL)
	if len(v.errors) > 0 {
		t.Errorf("bob's session beside alice's 8 channels: %d error messages %q, want none", len(v.errors), v.errors)
	}
	if wer > maxConcurrentWideWER {
		t.Errorf("bob's session beside alice's 8 channels: WER %.3f over %.2f", wer, maxConcurrentWideWER)
	}
	shared := false
	for _, e := range hog.errors {
		shared = shared || strings.Contains(e, "its share")
	}
	if !shared {
		t.Errorf("alice's 8 channels on a pool of 8 with a share of half: no error message names the share (%q)", hog.errors)
	}
	if len(hog.finals) == 0 {
		t.Errorf("alice's session got no final: her share of the pool decodes")
	}
}

// TestLiveOneAccountWholePool: on a box of one account, that account's
// channels have every decoder of a live pool: the per-account share
// (live.decoder_share) keeps room for another account's first words, and
// there is none (daemon/tenants.go). An 8-channel session on the pool of 8
// gets its finals with no channel refused a decoder. Before, the share
// held for a lone account too: 4 of its 8 channels missed their utterances
// with error messages naming the share. Every channel is the same 5.4 s
// sentence, so all 8 talk, and need a decoder, at once (before, the same
// with an 11.7 s one).
func TestLiveOneAccountWholePool(t *testing.T) {
	// No batch pass: the live finals are what is measured, and an
	// 8-channel pass would only add to the package's time.
	d := startDaemon(t, "", liveFairnessConfig+"  batch_pass: false\n", warmPools...)
	solo := createKey(t, d.DataDir, "callcentre")
	waitLoaded(t, d)
	s := d.createLive(solo, map[string]any{"channels": 8})
	first, _ := clip(t, "ls-test-clean-1089-134691-0001.wav")
	msgs, code := runSession(t, s.URL, interleave(pcmOf(t, first), 8), 32*8, 100*time.Millisecond)
	v := viewLive(t, msgs)
	t.Logf("one account's 8 channels: close %d, %d finals, %d error messages %q", code, len(v.finals), len(v.errors), v.errors)
	if len(v.errors) > 0 || code != 1000 {
		t.Errorf("the box's only account, 8 channels on a live pool of 8: close %d, error messages %q; want 1000 and none", code, v.errors)
	}
	if len(v.finals) < 8 {
		t.Errorf("%d finals for 8 channels of speech, want each channel's", len(v.finals))
	}
}
