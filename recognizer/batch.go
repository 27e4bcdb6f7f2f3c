package recognizer

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"

	"golang.org/x/sync/errgroup"
)

// BatchOptions configures Transcribe.
type BatchOptions struct {
	// Language is the language code to decode; "" means the engine's first
	// language, unless Detect is set.
	Language string
	// Detect asks the engine to detect the language of each segment (an
	// engine that can, such as a remote Whisper server, takes an empty
	// StreamOptions.Language as "detect"): Language must be "", and every
	// utterance keeps the language the engine reported.
	Detect bool
	// Concurrency is how many segments decode at once; default (0) the
	// number of CPUs. The engine's pool bounds it too: a segment waits for
	// a free decoder.
	Concurrency int
	// VAD segments each channel; zero fields take their defaults.
	VAD VADConfig
	// Vocabulary and Prompt are passed to every stream (StreamOptions).
	Vocabulary []VocabularyWord
	Prompt     string
	// Record is passed to every stream (StreamOptions.Record): the
	// recording is a live session's, decoded for its record.
	Record bool
}

// BatchResult is what Transcribe found in a multi-channel recording.
type BatchResult struct {
	// Utterances of all channels ordered by Start (then Channel); Channel
	// is the source channel index. Utterances without words are dropped.
	Utterances []Utterance
	// DistinctChannels counts channels whose samples are not identical to
	// an earlier channel's (identical ones are transcribed once, under the
	// first channel's index).
	DistinctChannels int
	// Language is the language code decoded.
	Language string
}

// wholeDecoder is implemented by streams that decode a complete segment
// better in one pass than incrementally (sphinx.Stream normalises cepstra
// over the whole segment, as PocketSphinx's batch tool does). Transcribe
// uses it when available.
type wholeDecoder interface {
	Decode(pcm []int16) (Utterance, error)
}

// writeChunk is how much audio Transcribe writes at once to a stream
// without Decode, and so how often it checks for cancellation (1 s).
const writeChunk = SampleRate

// Transcribe segments each distinct channel (16 kHz mono PCM) with the
// VAD, decodes the segments in parallel through e (each segment a
// NewStream, Decode or Write and Finish, Close), shifts word and utterance
// times to file time, and drops empty utterances.
//
// Cancelling ctx stops it promptly: no new segment starts, a segment
// written in chunks stops at the next chunk, and a segment in a one-pass
// Decode finishes first (at most MaxSegment of audio). It then returns the
// context's error. An unserved language wraps ErrLanguage; other errors are
// the first failure of a segment, wrapped with its channel and time.
func Transcribe(ctx context.Context, e Engine, channels [][]int16, o BatchOptions) (*BatchResult, error) {
	langs := e.Languages()
	lang := o.Language
	switch {
	case o.Detect && lang != "":
		return nil, fmt.Errorf("recognizer: transcribe: Detect with Language %q", lang)
	case o.Detect:
	case lang == "" && len(langs) > 0:
		lang = langs[0]
		fallthrough
	default:
		if !slices.Contains(langs, lang) {
			return nil, fmt.Errorf("recognizer: transcribe in %q (installed: %v): %w", lang, langs, ErrLanguage)
		}
	}
	conc := o.Concurrency
	if conc <= 0 {
		conc = runtime.NumCPU()
	}
	vad := o.VAD
	vad.SetDefaults()
	if err := vad.Validate(); err != nil {
		return nil, err
	}

	type job struct {
		channel int
		span    Span
	}
	var jobs []job
	distinct := 0
	for i, pcm := range channels {
		if slices.ContainsFunc(channels[:i], func(prev []int16) bool { return slices.Equal(prev, pcm) }) {
			continue
		}
		distinct++
		for _, s := range Segment(pcm, vad) {
			jobs = append(jobs, job{i, s})
		}
	}

	results := make([]Utterance, len(jobs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(conc)
	for k, j := range jobs {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			pcm := channels[j.channel][j.span.Start:j.span.End]
			u, err := decodeSegment(gctx, e, StreamOptions{Language: lang, Vocabulary: o.Vocabulary, Prompt: o.Prompt, Record: o.Record}, pcm)
			if err != nil {
				return fmt.Errorf("recognizer: channel %d at %.2fs: %w", j.channel, seconds(j.span.Start), err)
			}
			offset := seconds(j.span.Start)
			u.Start += offset
			u.End += offset
			for w := range u.Words {
				u.Words[w].Start += offset
				u.Words[w].End += offset
			}
			u.Channel = j.channel
			if !o.Detect || u.Language == "" {
				u.Language = lang
			}
			results[k] = u
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}

	res := &BatchResult{DistinctChannels: distinct, Language: lang}
	for _, u := range results {
		if len(u.Words) > 0 {
			res.Utterances = append(res.Utterances, u)
		}
	}
	slices.SortStableFunc(res.Utterances, func(a, b Utterance) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.Channel, b.Channel))
	})
	return res, nil
}

// decodeSegment runs one segment through a fresh stream.
func decodeSegment(ctx context.Context, e Engine, so StreamOptions, pcm []int16) (Utterance, error) {
	st, err := e.NewStream(ctx, so)
	if err != nil {
		return Utterance{}, err
	}
	defer st.Close()
	if d, ok := st.(wholeDecoder); ok {
		return d.Decode(pcm)
	}
	for i := 0; i < len(pcm); i += writeChunk {
		if err := ctx.Err(); err != nil {
			return Utterance{}, err
		}
		if err := st.Write(pcm[i:min(i+writeChunk, len(pcm))]); err != nil {
			return Utterance{}, err
		}
	}
	return st.Finish()
}

func seconds(samples int) float64 { return float64(samples) / SampleRate }
