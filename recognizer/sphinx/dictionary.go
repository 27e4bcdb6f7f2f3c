package sphinx

/*
#cgo pkg-config: pocketsphinx sphinxbase
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include <sphinxbase/logmath.h>
#include <sphinxbase/ngram_model.h>

// es_lm_words reads the n-gram model at path and returns its words, each
// followed by '\n', in one malloc'd buffer of *size bytes; NULL when the
// model cannot be read. The model is freed again and its heap handed back
// (malloc_trim): only its word list is kept.
static char *es_lm_words(const char *path, size_t *size) {
	*size = 0;
	logmath_t *lmath = logmath_init(1.0001, 0, 0);
	if (lmath == NULL)
		return NULL;
	ngram_model_t *lm = ngram_model_read(NULL, path, NGRAM_AUTO, lmath);
	if (lm == NULL) {
		logmath_free(lmath);
		return NULL;
	}
	uint32 n = ngram_model_get_counts(lm)[0];
	size_t total = 0;
	for (uint32 i = 0; i < n; i++)
		total += strlen(ngram_word(lm, i)) + 1;
	char *buf = malloc(total + 1);
	if (buf != NULL) {
		char *p = buf;
		for (uint32 i = 0; i < n; i++) {
			const char *w = ngram_word(lm, i);
			size_t len = strlen(w);
			memcpy(p, w, len);
			p[len] = '\n';
			p += len + 1;
		}
		*size = total;
	}
	ngram_model_free(lm);
	logmath_free(lmath);
	malloc_trim(0);
	return buf;
}
*/
import "C"

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
	"unsafe"
)

// searchDictionary returns the lines of the pronunciation dictionary at
// dict whose word the n-gram model at lm has (alternates "w(2)" by their
// word w): the dictionary a pool's decoders load. PocketSphinx's n-gram
// search never proposes a word its model lacks, yet every dictionary entry
// costs memory in the dictionary and in each search's per-word tables:
// Debian's cmudict has 134,723 entries and its en-us model 72,547 words,
// so the full dictionary cost each decoder about 13 MB more and each of its
// searches about 16 MB more, for the same words out (pocketsphinx_batch
// gives the same hypotheses on testdata with either). A vocabulary adds
// the lexicon's entries of its words the decoder lacks
// (vocabulary.dictionaryEntries), for its own language model.
func searchDictionary(dict, lm string) ([]byte, error) {
	words, err := lmWords(lm)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(dict)
	if err != nil {
		return nil, fmt.Errorf("%w: dict: %w", ErrInit, err)
	}
	defer f.Close()
	var out bytes.Buffer
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Bytes()
		head := bytes.TrimSpace(line)
		i := bytes.IndexAny(head, " \t")
		if i <= 0 {
			continue
		}
		head = head[:i]
		if i := bytes.IndexByte(head, '('); i > 0 && head[len(head)-1] == ')' {
			head = head[:i]
		}
		if words[string(head)] {
			out.Write(line)
			out.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: dict: %w", ErrInit, err)
	}
	if out.Len() == 0 {
		return nil, fmt.Errorf("%w: dict %s has no word of the language model %s", ErrInit, dict, lm)
	}
	return out.Bytes(), nil
}

// lmWords returns the set of words of the n-gram model at path.
func lmWords(path string) (map[string]bool, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var size C.size_t
	buf := C.es_lm_words(cpath, &size)
	if buf == nil {
		return nil, fmt.Errorf("%w: read language model %s", ErrInit, path)
	}
	defer C.free(unsafe.Pointer(buf))
	text := C.GoStringN(buf, C.int(size))
	words := make(map[string]bool, strings.Count(text, "\n"))
	for w := range strings.SplitSeq(strings.TrimSuffix(text, "\n"), "\n") {
		words[w] = true
	}
	return words, nil
}

// tempFile writes b to a new private file in the temporary directory,
// for C code that reads a file by name, and returns its path and a
// function that removes it (call it once the file was read).
func tempFile(pattern string, b []byte) (string, func(), error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return "", nil, err
	}
	remove := func() { os.Remove(f.Name()) }
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		remove()
		return "", nil, err
	}
	return f.Name(), remove, nil
}
