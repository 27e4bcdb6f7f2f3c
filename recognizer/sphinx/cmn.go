package sphinx

/*
#cgo pkg-config: pocketsphinx sphinxbase
#include <pocketsphinx.h>
#include <sphinxbase/cmn.h>
#include <sphinxbase/feat.h>
#include <sphinxbase/fe.h>
#include <sphinxbase/ckd_alloc.h>

// es_cmn_set_live switches the decoder to live CMN starting from the mean
// vec, counted as nframe frames of audio: PocketSphinx's running sum goes on
// from there (cmn_live_set alone counts it as CMN_WIN, 5 s).
static void es_cmn_set_live(ps_decoder_t *ps, mfcc_t const *vec, int nframe) {
	feat_t *f = ps_get_feat(ps);
	f->cmn = CMN_LIVE;
	cmn_live_set(f->cmn_struct, vec);
	if (nframe > 0) {
		cmn_t *c = f->cmn_struct;
		for (int i = 0; i < c->veclen; i++)
			c->sum[i] = vec[i] * nframe;
		c->nframe = nframe;
	}
}
// es_cmn_refresh makes the live mean the running mean of the frames so far
// (the primer's and the utterance's), as PocketSphinx otherwise only does
// every 3 s and at the end of an utterance.
static void es_cmn_refresh(ps_decoder_t *ps) {
	feat_t *f = ps_get_feat(ps);
	if (f->cmn == CMN_LIVE)
		cmn_live_update(f->cmn_struct);
}
static void es_live_mean(ps_decoder_t *ps, mfcc_t *vec) {
	cmn_live_get(ps_get_feat(ps)->cmn_struct, vec);
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
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"github.com/earshot-dev/earshot/recognizer"
)

// CMNPriorFile is the file in an acoustic model's directory that holds the
// model's CMN prior (see setCMNFrom): the mean cepstrum of speech as the
// model's front end computes it from earshot's input, written by
// cmd/cmnprior (`make cmn-prior`). Debian's model (DefaultHMM), whose
// directory is not ours, gets the prior built into the package
// (cmn_prior_en-us, also `make cmn-prior`); any other model without the
// file uses its own -cmninit (feat.params).
const CMNPriorFile = "cmn_prior"

//go:embed cmn_prior_en-us
var defaultCMNPrior []byte

// cmnPriorFrames is how many frames (10 ms each) of audio the model's CMN
// prior counts as when a stream is primed (setCMNFrom): a primer of n
// frames moves the starting mean n/(n+cmnPriorFrames) of the way from the
// prior to its own mean, so a short first sound of a channel (a click, a
// "yes") no longer sets the normalisation of the seconds after it. Chosen
// on the corpus tuning subset from 100, 300, 500 and 1000
// (docs/live-tuning.md, 2026-11-24 06:40-07:40 UTC).
const cmnPriorFrames = 300

// loadCMNPrior returns the CMN prior of the model in dir (CMNPriorFile,
// the built-in one for DefaultHMM), or init (the model's -cmninit) when it
// has none.
func loadCMNPrior(dir string, init []C.mfcc_t) ([]C.mfcc_t, error) {
	path := filepath.Join(dir, CMNPriorFile)
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist) && filepath.Clean(dir) == DefaultHMM:
		path, b, err = "built in for "+DefaultHMM, defaultCMNPrior, nil
	case errors.Is(err, os.ErrNotExist):
		return append([]C.mfcc_t(nil), init...), nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: CMN prior: %w", ErrInit, err)
	}
	v, err := ParseCMNPrior(b)
	if err != nil {
		return nil, fmt.Errorf("%w: CMN prior %s: %w", ErrInit, path, err)
	}
	if len(v) != len(init) {
		return nil, fmt.Errorf("%w: CMN prior %s has %d values, the model's cepstra %d", ErrInit, path, len(v), len(init))
	}
	out := make([]C.mfcc_t, len(v))
	for i, x := range v {
		out[i] = C.mfcc_t(x)
	}
	return out, nil
}

// ParseCMNPrior reads a CMN prior file: lines starting with # are
// comments, and one line holds the mean cepstrum as comma-separated
// numbers (the form of -cmninit).
func ParseCMNPrior(b []byte) ([]float64, error) {
	var out []float64
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if out != nil {
			return nil, errors.New("more than one line of values")
		}
		for _, f := range strings.Split(line, ",") {
			x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > 1e4 {
				return nil, fmt.Errorf("value %q is not a cepstral coefficient", f)
			}
			out = append(out, x)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no values")
	}
	return out, nil
}

// FormatCMNPrior writes mean as a CMN prior file (ParseCMNPrior) headed by
// the comment lines.
func FormatCMNPrior(mean []float64, comment ...string) []byte {
	var b strings.Builder
	for _, c := range comment {
		fmt.Fprintf(&b, "# %s\n", c)
	}
	for i, x := range mean {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatFloat(x, 'f', 4, 64))
	}
	b.WriteByte('\n')
	return []byte(b.String())
}

// CepstralMean returns the mean cepstrum of pcm (16 kHz) as the engine's
// front end computes it, and the number of frames it averages, on a
// decoder of the pool (waiting for one as NewStream does).
func (e *Engine) CepstralMean(ctx context.Context, pcm []int16) ([]float64, int, error) {
	st, err := e.NewStream(ctx, recognizer.StreamOptions{})
	if err != nil {
		return nil, 0, err
	}
	defer st.Close()
	d := st.(*Stream).d
	if len(pcm) == 0 {
		return nil, 0, nil
	}
	vec := make([]C.mfcc_t, len(d.cmnInit))
	// The C side only reads pcm during the call and keeps no pointer.
	n := int(C.es_cep_mean(d.ps, (*C.int16)(unsafe.Pointer(&pcm[0])), C.size_t(len(pcm)), &vec[0]))
	if n < 0 {
		return nil, 0, fmt.Errorf("%w: front end", ErrDecode)
	}
	return floats(vec), n, nil
}

// setCMNFrom starts live CMN from the mean cepstrum of pcm (audio of the
// same channel: earlier utterances and the start of this one) blended with
// the model's prior by frame counts (cmnPriorFrames), and has the live mean
// follow the running mean of the primer and the frames written since
// (refreshCMN), where PocketSphinx alone would keep the primed mean, counted
// as 5 s of audio, until 3 s more came. It must be called between
// utterances; false when pcm gives no frame.
func (d *decoder) setCMNFrom(pcm []int16) bool {
	if d.inUtt || len(pcm) == 0 {
		return false
	}
	vec := make([]C.mfcc_t, len(d.cmnInit))
	// The C side only reads pcm during the call and keeps no pointer.
	n := int(C.es_cep_mean(d.ps, (*C.int16)(unsafe.Pointer(&pcm[0])), C.size_t(len(pcm)), &vec[0]))
	if n <= 0 {
		return false
	}
	w := float64(cmnPriorFrames)
	for j := range vec {
		vec[j] = C.mfcc_t((w*float64(d.cmnPrior[j]) + float64(n)*float64(vec[j])) / (w + float64(n)))
	}
	C.es_cmn_set_live(d.ps, &vec[0], C.int(min(cmnPriorFrames+n, C.CMN_WIN)))
	d.cmnRefresh = true
	return true
}

// refreshCMN makes the live mean the running mean so far, after a write
// to a stream primed by setCMNFrom.
func (d *decoder) refreshCMN() {
	if d.cmnRefresh {
		C.es_cmn_refresh(d.ps)
	}
}

// liveMean returns the decoder's current live CMN mean.
func (d *decoder) liveMean() []float64 {
	vec := make([]C.mfcc_t, len(d.cmnInit))
	C.es_live_mean(d.ps, &vec[0])
	return floats(vec)
}

// floats converts a C vector.
func floats(v []C.mfcc_t) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
