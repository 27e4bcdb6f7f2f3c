package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// maxRequestFile bounds a --request file, as the API bounds a body.
const maxRequestFile = 1 << 20

// readRequest reads the JSON object of a --request file (- for stdin) for
// transcribe, submit and stream: the options of a request body, whose
// audio the command supplies. No path (or a file holding null) is {}.
func readRequest(path string) (map[string]json.RawMessage, error) {
	req := map[string]json.RawMessage{}
	if path == "" {
		return req, nil
	}
	f := os.Stdin
	if path != "-" {
		var err error
		if f, err = os.Open(path); err != nil {
			return nil, err
		}
		defer f.Close()
	}
	b, err := io.ReadAll(io.LimitReader(f, maxRequestFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxRequestFile {
		return nil, fmt.Errorf("--request: over %d bytes", maxRequestFile)
	}
	if err := json.Unmarshal(b, &req); err != nil {
		return nil, fmt.Errorf("--request: not a JSON object: %w", err)
	}
	if req == nil { // the file held null
		req = map[string]json.RawMessage{}
	}
	return req, nil
}
