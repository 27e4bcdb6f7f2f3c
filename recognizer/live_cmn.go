package recognizer

import (
	"context"
	"slices"
)

// cmnPrimer is implemented by streams whose feature normalisation can
// start from audio of the same channel (sphinx): an incremental decode has
// to normalise each frame as it comes, with a mean fixed before the
// utterance starts, where a batch decode uses the mean over the whole
// segment. Live primes every utterance's stream with the mean of the
// channel's recent utterance audio (up to liveCMNHistory) and, for the
// first speech of a channel, of the utterance's own first liveCMNWarm of
// audio, so the incremental decode is normalised as a batch decode of the
// same audio would be; without it each utterance would start from the
// model's initial mean, far off for many voices and channels.
//
// Frames of digital silence (signalFrames) are left out of that audio: a
// SIPREC leg, or any call leg whose sender stops while the other party
// talks, is digital silence (G.711's idle code: exact zeros through
// mu-law, ±8 through A-law) between its turns, and the pre-roll and pause
// of every turn on it are such frames. Their cepstrum is the front end's
// log floor, far below any speech or line noise, so a few hundred
// milliseconds of them moved the mean enough to cost the next turn many
// words: on callbench's SIPREC PCMU calls replayed offline, 0.619 WER of
// the live finals with them, against 0.525 for the same turns decoded
// without the leg's silence around them (bench/CALLS.md, issue 41).
type cmnPrimer interface {
	SetCMNFrom(pcm []int16)
}

// warm checks out the channel's decoder for an incremental decode once
// there is audio enough to normalise it by (liveCMNWarm of recent
// utterances and this one; at once when the channel has spoken before),
// primes it and feeds it the utterance so far. Without partials and with
// OnePassFinals the decoder is checked out only for the final.
func (l *Live) warm(ctx context.Context, ch *liveChannel, t1 int64) error {
	if ch.st != nil || ch.errored || !l.incremental() || len(ch.hist)+len(ch.utt) < int(l.warmLen) {
		return nil
	}
	if err := l.checkout(ctx, ch, ch.speechStart, t1, false); err != nil || ch.st == nil {
		return err
	}
	l.write(ch, ch.utt, t1)
	return nil
}

// primeCMN starts the stream's normalisation from the channel's recent
// utterance audio and the current utterance so far (cmnPrimer).
func (l *Live) primeCMN(ch *liveChannel) {
	p, ok := ch.st.(cmnPrimer)
	if !ok {
		return
	}
	ch.prime = signalFrames(append(ch.prime[:0], ch.hist...), ch.utt)
	p.SetCMNFrom(ch.prime)
}

// remember appends the finished utterance's audio to the channel's
// history, keeping its last liveCMNHistory.
func (l *Live) remember(ch *liveChannel) {
	ch.hist = signalFrames(ch.hist, ch.utt)
	if over := len(ch.hist) - int(l.histLen); over > 0 {
		n := copy(ch.hist, ch.hist[over:])
		ch.hist = ch.hist[:n]
	}
}

// liveIdlePeak is the largest sample (16-bit) of a frame of digital
// silence: G.711's smallest non-zero level. A line's idle code decodes to
// zeros (mu-law) or ±8 (A-law), and frames that peak no higher carry no
// signal; speech, and the noise of any real line or room, peak above it.
const liveIdlePeak = 8

// idleFrame reports whether a frame is digital silence (liveIdlePeak).
func idleFrame(f []int16) bool {
	return !slices.ContainsFunc(f, func(s int16) bool { return s > liveIdlePeak || s < -liveIdlePeak })
}

// signalFrames appends to dst the 10 ms frames of pcm (from its first
// sample; a last partial frame counts as a frame) that are not digital
// silence (liveIdlePeak), and returns it: the audio a channel's CMN is
// primed from.
func signalFrames(dst, pcm []int16) []int16 {
	for i := 0; i < len(pcm); i += liveFrameLen {
		if f := pcm[i:min(i+liveFrameLen, len(pcm))]; !idleFrame(f) {
			dst = append(dst, f...)
		}
	}
	return dst
}

// afterIdle returns where in pcm (whole 10 ms frames from its first
// sample) the audio after its last frame of digital silence starts: 0
// when it has none, len(pcm) when it ends in one. An utterance's pre-roll
// starts there (begin), as a batch segment's padding stops at digital
// silence (Segment). The two tests differ: Segment's is a frame's level
// below -80 dBFS (digitalSilence), which mu-law's idle code meets and
// A-law's (±8, about -72 dBFS) does not; this one is the frame's peak.
func afterIdle(pcm []int16) int {
	for i := (len(pcm)/liveFrameLen - 1) * liveFrameLen; i >= 0; i -= liveFrameLen {
		if idleFrame(pcm[i : i+liveFrameLen]) {
			return i + liveFrameLen
		}
	}
	return 0
}
