package recognizer

import "context"

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
	ch.prime = append(append(ch.prime[:0], ch.hist...), ch.utt...)
	p.SetCMNFrom(ch.prime)
}

// remember appends the finished utterance's audio to the channel's
// history, keeping its last liveCMNHistory.
func (l *Live) remember(ch *liveChannel) {
	ch.hist = append(ch.hist, ch.utt...)
	if over := len(ch.hist) - int(l.histLen); over > 0 {
		n := copy(ch.hist, ch.hist[over:])
		ch.hist = ch.hist[:n]
	}
}
