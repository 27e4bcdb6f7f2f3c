package sphinx

/*
#cgo pkg-config: pocketsphinx sphinxbase
#include <pocketsphinx.h>
#include <sphinxbase/cmn.h>
#include <sphinxbase/feat.h>
#include <sphinxbase/fe.h>
#include <sphinxbase/ckd_alloc.h>

// Small wrappers keep struct access and macros on the C side.
static int es_cepsize(ps_decoder_t *ps) {
	return (int)feat_cepsize(ps_get_feat(ps));
}
static int es_cmn_type(ps_decoder_t *ps) {
	return (int)ps_get_feat(ps)->cmn;
}
static void es_cmn_get(ps_decoder_t *ps, mfcc_t *vec) {
	cmn_live_get(ps_get_feat(ps)->cmn_struct, vec);
}
static void es_cmn_reset(ps_decoder_t *ps, int type, mfcc_t const *vec) {
	feat_t *f = ps_get_feat(ps);
	f->cmn = (cmn_type_t)type;
	cmn_live_set(f->cmn_struct, vec);
}
// es_cmn_set_live switches the decoder to live CMN starting from the mean
// vec, counted as n frames of audio (cmn_live_set counts any start as
// CMN_WIN frames); es_cmn_refresh sets the live mean to the running mean
// of that start and the frames since (cmn_live_update), which PocketSphinx
// itself does only at the end of an utterance or every CMN_WIN_HWM -
// CMN_WIN frames.
static void es_cmn_set_live(ps_decoder_t *ps, mfcc_t const *vec, int n) {
	feat_t *f = ps_get_feat(ps);
	f->cmn = CMN_LIVE;
	cmn_live_set(f->cmn_struct, vec);
	cmn_t *c = f->cmn_struct;
	for (int i = 0; i < c->veclen; i++)
		c->sum[i] = vec[i] * n;
	c->nframe = n;
}
static void es_cmn_refresh(ps_decoder_t *ps) {
	cmn_live_update(ps_get_feat(ps)->cmn_struct);
}
// es_cep_mean writes to mean the average cepstrum of the n samples at pcm
// as the decoder's front end computes it from a fresh stream (noise
// statistics reset, as ps_start_stream does), in chunks of 64 frames. It
// returns the number of frames averaged, or -1. Call it between
// utterances only: it uses the decoder's front end.
static int es_cep_mean(ps_decoder_t *ps, int16 const *pcm, size_t n, mfcc_t *mean) {
	fe_t *fe = ps_get_fe(ps);
	int ncep = fe_get_output_size(fe);
	enum { chunk = 64 };
	mfcc_t **cep = (mfcc_t **)ckd_calloc_2d(chunk, ncep, sizeof(mfcc_t));
	double *sum = (double *)ckd_calloc(ncep, sizeof(double));
	int total = 0;
	int32 idx = 0;
	fe_start_stream(fe);
	fe_start_utt(fe);
	while (n > 0) {
		int32 got = chunk;
		size_t before = n;
		if (fe_process_frames(fe, &pcm, &n, cep, &got, &idx) < 0) {
			total = -1;
			break;
		}
		for (int i = 0; i < got; i++)
			for (int j = 0; j < ncep; j++)
				sum[j] += cep[i][j];
		total += got;
		if (got == 0 && n == before)
			break;
	}
	if (total >= 0) {
		int32 last = 0;
		fe_end_utt(fe, cep[0], &last);
		for (int i = 0; i < last; i++)
			for (int j = 0; j < ncep; j++)
				sum[j] += cep[0][j];
		total += last;
		for (int j = 0; j < ncep && total > 0; j++)
			mean[j] = (mfcc_t)(sum[j] / total);
	}
	ckd_free(sum);
	ckd_free_2d((void **)cep);
	return total;
}
*/
import "C"

import (
	"unsafe"

	"github.com/earshot-dev/earshot/recognizer"
)

// The decoder's cepstral mean normalisation (CMN): the state ps_init left
// (restored between streams), and the live mean a stream starts from the
// channel's own audio.

// initCMN records the CMN state ps_init left (feat.params' mode and
// -cmninit), which resetCMN restores.
func (d *decoder) initCMN() {
	d.cmnType = C.es_cmn_type(d.ps)
	d.cmnInit = make([]C.mfcc_t, int(C.es_cepsize(d.ps)))
	C.es_cmn_get(d.ps, &d.cmnInit[0])
}

// resetCMN restores the CMN state left by ps_init (see decoder.reset).
func (d *decoder) resetCMN() {
	C.es_cmn_reset(d.ps, d.cmnType, &d.cmnInit[0])
	d.primed = false
}

// setCMNFrom starts live CMN from the mean cepstrum of pcm (audio of the
// same channel: earlier utterances and the start of this one), so the
// utterance is normalised as a batch decode over that audio would be. The
// mean counts as the frames it was made of (at most C.CMN_WIN, 5 s), not
// always as 5 s, and refreshCMN keeps it the running mean of it and the
// frames decoded since: a start made of a short first sound is outweighed
// as the speech comes, instead of normalising the next 3 s unchanged.
// Measured on the corpus (docs/live-tuning.md, 2026-11-28 04:50 UTC):
// live finals' WER on the tuning subset 39.47 -> 39.37 % at 16 kHz and
// 43.28 -> 41.55 % through mu-law; on the held-out readers 73.14 -> 69.79 %
// and 80.57 -> 79.68 %. It must be called between utterances; false when
// pcm gives no frame.
func (d *decoder) setCMNFrom(pcm []int16) bool {
	if d.inUtt || len(pcm) == 0 {
		return false
	}
	vec := make([]C.mfcc_t, len(d.cmnInit))
	// The C side only reads pcm during the call and keeps no pointer.
	n := C.es_cep_mean(d.ps, (*C.int16)(unsafe.Pointer(&pcm[0])), C.size_t(len(pcm)), &vec[0])
	if n <= 0 {
		return false
	}
	C.es_cmn_set_live(d.ps, &vec[0], min(n, C.CMN_WIN))
	d.primed = true
	return true
}

// cmnRefresh is how often refreshCMN makes the live mean the running mean:
// every second of audio. Every 200 ms block was better on the corpus
// tuning subset (live finals 38.25 % at 16 kHz and 41.15 % through mu-law,
// against 39.37 and 41.55) but moved the start of short sessions too fast:
// recognizer.TestLiveChannels' first channel went from 0.29 to 0.41 WER
// against its 0.30 bound (docs/live-tuning.md, 2026-11-28 04:50 UTC).
const cmnRefresh = recognizer.SampleRate

// refreshCMN makes a primed decoder's live mean the running mean of its
// start and the frames decoded since (see setCMNFrom), once a second of
// audio; a decoder that was not primed keeps PocketSphinx's own schedule.
func (d *decoder) refreshCMN() {
	if d.primed && d.nSamples-d.refreshed >= cmnRefresh {
		d.refreshed = d.nSamples
		C.es_cmn_refresh(d.ps)
	}
}

// cmnMean returns the decoder's live CMN mean.
func (d *decoder) cmnMean() []float64 {
	vec := make([]C.mfcc_t, len(d.cmnInit))
	C.es_cmn_get(d.ps, &vec[0])
	out := make([]float64, len(vec))
	for i, v := range vec {
		out[i] = float64(v)
	}
	return out
}
