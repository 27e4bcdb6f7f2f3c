package pipeline

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/llm"
	"github.com/earshot-dev/earshot/recognizer/remote"
)

// speechTranslator is the translation add-on of a job transcribed by a
// remote engine when no chat backend is configured: each utterance's
// audio goes to the engine's /audio/translations, which translates speech
// into English only. Translated utterances keep the original ones' start,
// end and channel; their words are placed inside that span.
type speechTranslator struct {
	r        *remote.Engine
	channels [][]int16
	// redacted is set when the job asked for pii_redaction: translating
	// the audio again would bring back the words it removed.
	redacted bool
}

var _ Translator = speechTranslator{}

// translatePad is audio kept around an utterance's words when it is sent
// for translation, so the first and last words are not cut.
const translatePad = 0.2

// speechTranslator returns the translator for a job whose post_session
// metadata names engine, nil when that engine is not remote (nil-safe).
func (e *Engines) speechTranslator(engine string, channels [][]int16, p *params.PreRecorded) Translator {
	if e == nil {
		return nil
	}
	r := e.remoteNamed(e.byName(engine))
	if r == nil {
		return nil
	}
	return speechTranslator{r: r, channels: channels, redacted: p.PIIRedaction}
}

// Translate sends each utterance's audio to the engine's translation
// endpoint, as many at once as the engine has slots.
func (t speechTranslator) Translate(ctx context.Context, utts []recognizer.Utterance, target string, _ llm.TranslationOptions) ([]recognizer.Utterance, error) {
	name := t.r.Name()
	if target != "en" {
		return nil, fmt.Errorf("translation to %s needs addons.llm (engine %s translates speech into en only): %w", target, name, recognizer.ErrNotConfigured)
	}
	if t.redacted {
		return nil, fmt.Errorf("translation with pii_redaction needs addons.llm (engine %s would translate the redacted words again): %w", name, recognizer.ErrNotConfigured)
	}
	out := make([]recognizer.Utterance, len(utts))
	slots, _ := t.r.Stats()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(slots, 1))
	for i, u := range utts {
		g.Go(func() error {
			tu, err := t.one(gctx, u)
			if err != nil {
				return engineError(name, err)
			}
			out[i] = tu
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// one translates one utterance.
func (t speechTranslator) one(ctx context.Context, u recognizer.Utterance) (recognizer.Utterance, error) {
	res := recognizer.Utterance{Start: u.Start, End: u.End, Channel: u.Channel, Language: "en"}
	ch := min(max(u.Channel, 0), len(t.channels)-1)
	if ch < 0 {
		return res, nil
	}
	pcm := t.channels[ch]
	from := min(max(int((u.Start-translatePad)*recognizer.SampleRate), 0), len(pcm))
	to := min(max(int((u.End+translatePad)*recognizer.SampleRate), from), len(pcm))
	tu, err := t.r.Translate(ctx, pcm[from:to], "")
	if err != nil {
		return res, err
	}
	off := float64(from) / recognizer.SampleRate
	for _, w := range tu.Words {
		w.Start = min(max(w.Start+off, u.Start), u.End)
		w.End = min(max(w.End+off, w.Start), u.End)
		res.Words = append(res.Words, w)
	}
	res.Text, res.Confidence = tu.Text, tu.Confidence
	return res, nil
}
