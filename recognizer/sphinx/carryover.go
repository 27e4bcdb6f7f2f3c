package sphinx

/*
#cgo pkg-config: pocketsphinx sphinxbase
#include <string.h>
#include <pocketsphinx.h>
#include <sphinxbase/bitvec.h>
#include <sphinxbase/ckd_alloc.h>
#include <sphinxbase/feat.h>
#include <sphinxbase/fe.h>

// What one use of a decoder leaves behind for the next that PocketSphinx's
// public API does not reset, and the internal structures holding it. The
// layouts below are those of Debian 12's libpocketsphinx3
// (0.8+5prealpha+1-15: pocketsphinx_internal.h, acmod.h, ptm_mgau.h,
// ms_gauden.h), the package the Makefile installs and the .deb depends on;
// only the leading fields up to the last one used are declared.
// es_carry_check verifies them against what the public API reports, on a
// decoder fresh from ps_init, before anything is written through them.

typedef struct { int32 cw; int32 score; } es_ptm_topn_t;
typedef struct { es_ptm_topn_t ***topn; bitvec_t *mgau_active; } es_ptm_fast_eval_t;
typedef struct { const char *name; } es_mgaufuncs_t;
typedef struct { es_mgaufuncs_t *vt; int frame_idx; } es_mgau_t;
typedef struct {
	void *mean, *var, *det, *lmath;
	int32 n_mgau, n_feat, n_density;
	int32 *featlen;
} es_gauden_t;
typedef struct {
	es_mgau_t base;
	cmd_ln_t *config;
	es_gauden_t *g;
	int32 n_sen;
	uint8 *sen2cb;
	uint8 ***mixw;
	void *sendump_mmap;
	uint8 *mixw_cb;
	int16 max_topn;
	int16 ds_ratio;
	es_ptm_fast_eval_t *hist;
	es_ptm_fast_eval_t *f;
	int n_fast_hist;
} es_ptm_mgau_t;
typedef struct {
	cmd_ln_t *config;
	void *lmath;
	void *strings;
	fe_t *fe;
	feat_t *fcb;
	void *mdef;
	void *tmat;
	es_mgau_t *mgau;
	void *mllr;
	int16 *senone_scores;
	bitvec_t *senone_active_vec;
	uint8 *senone_active;
	int senscr_frame;
	int n_senone_active;
	int log_zero;
	mfcc_t **mfc_buf;
	mfcc_t ***feat_buf;
	FILE *rawfh, *mfcfh, *senfh, *insenfh;
	long *framepos;
	int16 *rawdata;
	int32 rawdata_size, rawdata_pos;
	uint8 state, compallsen, grow_feat, insen_swap;
	int32 utt_start_frame, output_frame;
	int32 n_mfc_alloc, n_mfc_frame, mfc_outidx;
	int32 n_feat_alloc, n_feat_frame, feat_outidx;
} es_acmod_t;
typedef struct { cmd_ln_t *config; int refcount; es_acmod_t *acmod; } es_decoder_t;

enum { ES_ACMOD_STARTED = 1, ES_ACMOD_PROCESSING = 2 };
#define ES_WORST_DIST ((int32)0x80000000)

static es_acmod_t *es_acmod(ps_decoder_t *ps) { return ((es_decoder_t *)ps)->acmod; }

// es_carry_check reports whether the layouts above are the library's, on
// a decoder fresh from ps_init: 0, or the negative check that failed. It
// sets *ptm when the acoustic model is PTM (es_ptm_mgau_t), and *mfc and
// *feat to the feature buffers' sizes, which es_carry_forget restores.
static int es_carry_check(ps_decoder_t *ps, int *ptm, int *mfc, int *feat) {
	cmd_ln_t *cfg = ps_get_config(ps);
	es_acmod_t *a = es_acmod(ps);
	*ptm = 0;
	if (a == NULL || a->config != cfg || a->fe != ps_get_fe(ps) || a->fcb != ps_get_feat(ps))
		return -1;
	long plw = cmd_ln_int_r(cfg, "-pl_window");
	// acmod_init's sizes; a search that keeps the utterance's frames
	// (acmod_set_grow) starts the feature buffer at 128 frames.
	if (a->n_mfc_alloc != feat_window_size(a->fcb) * 2 + 1 ||
	    (a->n_feat_alloc != a->n_mfc_alloc + plw && !(a->grow_feat == 1 && a->n_feat_alloc == 128)))
		return -2;
	if (a->state != 0 || a->mfc_buf == NULL || a->feat_buf == NULL || a->framepos == NULL)
		return -3;
	*mfc = a->n_mfc_alloc;
	*feat = a->n_feat_alloc;
	es_mgau_t *mg = a->mgau;
	if (mg == NULL || mg->vt == NULL || mg->vt->name == NULL)
		return -4;
	if (strcmp(mg->vt->name, "ptm") != 0)
		return 0;
	es_ptm_mgau_t *s = (es_ptm_mgau_t *)mg;
	if (s->config != cfg || s->max_topn != cmd_ln_int_r(cfg, "-topn") || s->n_fast_hist != plw + 2 ||
	    s->g == NULL || s->g->n_feat != feat_dimension1(a->fcb) || s->g->n_mgau <= 0 || s->g->n_mgau > 256 ||
	    s->hist == NULL || s->f != s->hist)
		return -5;
	*ptm = 1;
	return 0;
}

// es_carry_forget puts back, between utterances, what ps_init left and
// an utterance changes for the next: the PTM model's top-N Gaussians of
// recent frames, which seed the next frame's (ptm_mgau_frame_eval: ties
// in the integer scores keep the seeded one), and the feature buffers'
// sizes, which a whole-utterance decode grows to the utterance's length
// (acmod_process_full_raw) and which set the blocks that live CMN
// updates its mean between (cmn_live). Returns 0, or -1 in an utterance.
static int es_carry_forget(ps_decoder_t *ps, int ptm, int mfc, int feat) {
	es_acmod_t *a = es_acmod(ps);
	if (a->state == ES_ACMOD_STARTED || a->state == ES_ACMOD_PROCESSING)
		return -1;
	if (a->n_mfc_alloc != mfc) {
		ckd_free_2d(a->mfc_buf);
		a->mfc_buf = (mfcc_t **)ckd_calloc_2d(mfc, feat_cepsize(a->fcb), sizeof(mfcc_t));
		a->n_mfc_alloc = mfc;
	}
	if (a->n_feat_alloc != feat) {
		feat_array_free(a->feat_buf);
		a->feat_buf = feat_array_alloc(a->fcb, feat);
		a->framepos = (long *)ckd_realloc(a->framepos, feat * sizeof(long));
		a->n_feat_alloc = feat;
	}
	a->n_mfc_frame = a->mfc_outidx = 0;
	a->n_feat_frame = a->feat_outidx = 0;
	if (!ptm)
		return 0;
	es_ptm_mgau_t *s = (es_ptm_mgau_t *)a->mgau;
	for (int i = 0; i < s->n_fast_hist; i++) {
		for (int j = 0; j < s->g->n_mgau; j++)
			for (int k = 0; k < s->g->n_feat; k++)
				for (int m = 0; m < s->max_topn; m++) {
					s->hist[i].topn[j][k][m].cw = m;
					s->hist[i].topn[j][k][m].score = ES_WORST_DIST;
				}
		bitvec_set_all(s->hist[i].mgau_active, s->g->n_mgau);
	}
	s->f = s->hist;
	return 0;
}
// es_carry_ptm_fresh reports whether the PTM model's top-N history is as
// ps_init left it (1) or not (0).
static int es_carry_ptm_fresh(ps_decoder_t *ps) {
	es_ptm_mgau_t *s = (es_ptm_mgau_t *)es_acmod(ps)->mgau;
	for (int i = 0; i < s->n_fast_hist; i++)
		for (int j = 0; j < s->g->n_mgau; j++)
			for (int k = 0; k < s->g->n_feat; k++)
				for (int m = 0; m < s->max_topn; m++)
					if (s->hist[i].topn[j][k][m].cw != m || s->hist[i].topn[j][k][m].score != ES_WORST_DIST)
						return 0;
	return 1;
}
*/
import "C"

import "fmt"

// carryOver is what a decoder restores between streams beyond what
// PocketSphinx's API resets (es_carry_forget): without it a stream's words
// depend on what the pooled decoder decoded before, for another stream of
// perhaps another tenant (TestCarryOverForgotten; docs/live-tuning.md,
// 2026-11-30 23:40 UTC).
type carryOver struct {
	ptm       C.int // the acoustic model is PTM: its top-N history is reset
	mfc, feat C.int // feature buffer sizes after ps_init
}

// newCarryOver checks the internal layouts against the fresh decoder ps
// and records what es_carry_forget restores.
func newCarryOver(ps *C.ps_decoder_t) (*carryOver, error) {
	c := &carryOver{}
	if rv := C.es_carry_check(ps, &c.ptm, &c.mfc, &c.feat); rv < 0 {
		return nil, fmt.Errorf("%w: the library's decoder layout is not the one earshot was built for (check %d)", ErrInit, int(rv))
	}
	return c, nil
}

// forget restores it; call it between utterances.
func (c *carryOver) forget(ps *C.ps_decoder_t) {
	C.es_carry_forget(ps, c.ptm, c.mfc, c.feat)
}

// topNFresh reports whether a PTM model's top-N history is as ps_init left
// it (false when the model is not PTM).
func (c *carryOver) topNFresh(ps *C.ps_decoder_t) bool {
	return c.ptm != 0 && C.es_carry_ptm_fresh(ps) == 1
}
