package recognizer

import (
	"context"
	"errors"
	"fmt"
)

// A live channel's decoder: taken from the pool at a speech start (or
// later, when none was free), given back at the utterance's end.

// checkout gets the channel a decoder. With wait it waits at most
// DecoderWait, and when none comes it reports an error event and leaves
// ch.st nil. Without wait it takes one only if one is free now: when the
// pool is short (ErrAtCapacity) it leaves ch.st nil with no error, the
// utterance's audio stays buffered in ch.utt (with its time base,
// ch.uttStart) and the next frame tries again, or its final waits.
func (l *Live) checkout(ctx context.Context, ch *liveChannel, start, t1 int64, wait bool) error {
	var wctx context.Context
	var cancel context.CancelFunc
	if wait {
		wctx, cancel = context.WithTimeout(ctx, l.cfg.DecoderWait)
	} else {
		wctx, cancel = context.WithCancel(ctx)
		cancel() // a free decoder or none: NewStream takes one before it waits
	}
	st, err := l.e.NewStream(wctx, StreamOptions{Language: l.lang, Vocabulary: l.cfg.Vocabulary, Prompt: l.cfg.Prompt,
		Narrowband: l.cfg.Narrowband, Tenant: l.cfg.Tenant})
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("recognizer: live channel %d: wait for decoder: %w", ch.index, context.Cause(ctx))
		}
		if !wait && errors.Is(err, ErrAtCapacity) {
			return nil // none free now: buffered, tried again
		}
		if !ch.errored {
			ch.errored = true
			l.fail(ch, t1, fmt.Errorf("recognizer: live channel %d at %.2fs: %w", ch.index, seconds64(start), err))
		}
		return nil
	}
	ch.st = st
	if f, ok := st.(firstPassOnly); ok && l.segmented(ch) {
		f.FirstPassOnly()
	}
	if ls, ok := st.(leanSearch); ok {
		l.load.segment(ls)
		if ch.boxed = l.cfg.BoxLoad != nil && ls.HasLean(); ch.boxed {
			l.cfg.BoxLoad.join()
		}
	}
	l.primeCMN(ch)
	return nil
}

// release closes the channel's stream (its decoder goes back to the
// pool) and counts its segment out of the box's meter.
func (l *Live) release(ch *liveChannel) {
	ch.st.Close()
	ch.st = nil
	if ch.boxed {
		ch.boxed = false
		l.cfg.BoxLoad.leave()
	}
}
