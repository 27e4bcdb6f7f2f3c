package llm

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/earshot-dev/earshot/recognizer"
)

// TranslationOptions are translation_config's per-request knobs.
type TranslationOptions struct {
	// Context describes the recording (domain, names) for the model.
	Context string
	// Informal asks for the informal register (tu, du ...).
	Informal bool
	// MatchOriginalUtterances keeps one output utterance per input
	// utterance; otherwise a batch whose line count the model changed
	// becomes one utterance spanning the batch.
	MatchOriginalUtterances bool
}

// maxBatchUtterances bounds the lines of one translation request.
const maxBatchUtterances = 40

var numbered = regexp.MustCompile(`^\s*\[(\d+)\]\s?(.*)$`)

// Translate translates the utterances' text into the target language
// code, one request per batch of up to 40 utterances (and half of
// MaxInputChars), all within Config.Budget. The output keeps each
// utterance's start, end, channel and confidence, with Language set to
// target; its Words are the translated words with times spread over the
// utterance in proportion to their length (the model gives no timing).
// Utterances without text stay empty. With MatchOriginalUtterances a
// reply with the wrong number of lines is ErrMalformed.
func Translate(ctx context.Context, c *Client, utts []recognizer.Utterance, target string, tc TranslationOptions) ([]recognizer.Utterance, error) {
	if target == "" {
		return nil, fmt.Errorf("llm: translate: empty target language")
	}
	ctx, cancel := c.WithBudget(ctx)
	defer cancel()
	system := translateSystem(target, tc)
	out := make([]recognizer.Utterance, 0, len(utts))
	var batch []int
	chars := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		got, err := translateBatch(ctx, c, system, utts, batch, target, tc.MatchOriginalUtterances)
		if err != nil {
			return err
		}
		out = append(out, got...)
		batch, chars = batch[:0], 0
		return nil
	}
	for i, u := range utts {
		text := strings.TrimSpace(u.Text)
		if text == "" {
			if err := flush(); err != nil {
				return nil, err
			}
			e := u
			e.Words, e.Text, e.Language = nil, "", target
			out = append(out, e)
			continue
		}
		if len(batch) == maxBatchUtterances || chars+len(text) > c.cfg.MaxInputChars/2 {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		batch = append(batch, i)
		chars += len(text)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

func translateSystem(target string, tc TranslationOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are a professional translator. Translate each numbered line of a speech transcript into %s. ", languageName(target))
	b.WriteString("Reply with exactly one line per input line, each starting with its number in square brackets, " +
		"for example \"[1] ...\", in the same order, and nothing else. Keep names and numbers. " +
		"The transcript comes from speech recognition and has no punctuation; add punctuation in the translation.")
	if tc.Informal {
		b.WriteString(" Use the informal register (for example tu rather than vous, du rather than Sie).")
	}
	if c := strings.TrimSpace(tc.Context); c != "" {
		b.WriteString("\nContext of the recording: ")
		b.WriteString(c)
	}
	return b.String()
}

func translateBatch(ctx context.Context, c *Client, system string, utts []recognizer.Utterance, batch []int, target string, match bool) ([]recognizer.Utterance, error) {
	var user strings.Builder
	for k, i := range batch {
		fmt.Fprintf(&user, "[%d] %s\n", k+1, strings.Join(strings.Fields(utts[i].Text), " "))
	}
	reply, err := c.Complete(ctx, system, user.String())
	if err != nil {
		return nil, fmt.Errorf("llm: translate to %s: %w", target, err)
	}
	lines := map[int]string{}
	for _, l := range strings.Split(reply, "\n") {
		if m := numbered.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			lines[n] = strings.TrimSpace(m[2])
		}
	}
	complete := len(lines) == len(batch)
	for k := range batch {
		if _, ok := lines[k+1]; !ok {
			complete = false
		}
	}
	if complete {
		out := make([]recognizer.Utterance, len(batch))
		for k, i := range batch {
			out[k] = retimed(utts[i], lines[k+1], target)
		}
		return out, nil
	}
	if match {
		return nil, fmt.Errorf("llm: translate to %s: %w: %d numbered lines for %d utterances", target, ErrMalformed, len(lines), len(batch))
	}
	// One utterance spanning the batch, with the whole reply as text.
	text := reply
	if len(lines) > 0 {
		var parts []string
		for n := 1; n <= len(batch)*2; n++ {
			if l, ok := lines[n]; ok {
				parts = append(parts, l)
			}
		}
		text = strings.Join(parts, " ")
	}
	first, last := utts[batch[0]], utts[batch[len(batch)-1]]
	span := first
	span.End = max(first.End, last.End)
	var conf float64
	for _, i := range batch {
		conf += utts[i].Confidence
	}
	span.Confidence = conf / float64(len(batch))
	return []recognizer.Utterance{retimed(span, text, target)}, nil
}

// retimed returns u carrying text in language lang, its words spread over
// u's span in proportion to their length.
func retimed(u recognizer.Utterance, text, lang string) recognizer.Utterance {
	out := recognizer.Utterance{Start: u.Start, End: u.End, Confidence: u.Confidence, Channel: u.Channel, Language: lang}
	ws := strings.Fields(text)
	out.Text = strings.Join(ws, " ")
	total := 0
	for _, w := range ws {
		total += utf8.RuneCountInString(w) + 1
	}
	at := u.Start
	for _, w := range ws {
		d := (u.End - u.Start) * float64(utf8.RuneCountInString(w)+1) / float64(total)
		out.Words = append(out.Words, recognizer.Word{Word: w, Start: at, End: min(at+d, u.End), Confidence: u.Confidence})
		at += d
	}
	if n := len(out.Words); n > 0 {
		out.Words[n-1].End = u.End
	}
	return out
}
