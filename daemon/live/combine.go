package live

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/pipeline"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/transcript"
)

// combinable reports whether a batch pass's record may take stretches of
// the live finals: not when the pass derived anything from its own words
// that the live finals' words would then contradict (any add-on: they all
// read the transcript, custom spelling and PII redaction included), nor
// with a custom vocabulary (the scoring search has the engine's
// dictionary only).
func combinable(p *params.PreRecorded) bool {
	return !p.AnyAddon() && (p.CustomVocabulary == nil || !*p.CustomVocabulary)
}

// combineRecord makes res, the batch pass's result over the recording at
// path, take the live finals of job stretch by stretch where the engine
// scores them higher on the recording (pipeline.CombineUtterances; issue
// 41: the stored record is never worse than what the client saw), and
// notes record_stretches {live, batch} in its post_session_metadata. A record it cannot combine (another engine, the
// options above, no live utterances) stays the batch pass's.
func (s *Service) combineRecord(ctx context.Context, tr *pipeline.Transcriber, job *store.Job, path string, p *params.PreRecorded, res *pipeline.Result) {
	if !combinable(p) || len(job.Result) == 0 {
		return
	}
	var live pipeline.Result
	if err := json.Unmarshal(job.Result, &live); err != nil || len(live.Transcription.Utterances) == 0 {
		return
	}
	ch, err := tr.NewChooser(ctx, path, p)
	if err != nil {
		if !errors.Is(err, pipeline.ErrNoChooser) {
			s.log.Warn("batch pass: the record stays the batch pass's", "job_id", job.ID, "error", err)
		}
		return
	}
	defer ch.Close()
	utts, fromLive, n := combineBelowLive(s.gate.cpu, live.Transcription.Utterances, res.Transcription.Utterances, ch.Choose)
	if res.PostSessionMetadata == nil {
		res.PostSessionMetadata = map[string]any{}
	}
	res.PostSessionMetadata["record_stretches"] = map[string]any{"live": fromLive, "batch": n - fromLive}
	if fromLive == 0 {
		return
	}
	res.Transcription.Utterances = utts
	res.Transcription.FullTranscript = pipeline.JoinUtterances(utts)
}

// combineBelowLive is pipeline.CombineUtterances with its scoring searches
// on a thread below the live decodes, as the pass's own decodes are
// (recognizer.CPU.BatchDecode): the scoring is about a tenth of a wideband
// record's CPU (bench/CALLS.md) and must not delay live finals either.
func combineBelowLive(cpu *recognizer.CPU, liveUtts, batchUtts []transcript.Utterance, choose pipeline.ChooseFunc) (utts []transcript.Utterance, fromLive, stretches int) {
	cpu.BatchDecode(func() {
		utts, fromLive, stretches = pipeline.CombineUtterances(liveUtts, batchUtts, choose)
	})
	return utts, fromLive, stretches
}
