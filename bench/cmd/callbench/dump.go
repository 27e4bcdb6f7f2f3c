package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/earshot-dev/earshot/bench/internal/benchd"
)

// dumpCall writes one call's diagnosis to dir as <row>-call<i>.json and
// .wav: the recording the door made, the stored job (live finals in
// result.messages, the record's utterances, post_session_metadata), the
// call's turns with their references, and each stream's lost packets (20
// ms each from call time 0), so the losses, the turns and both passes'
// words can be compared offline.
func dumpCall(d *benchd.Daemon, dir string, r row, i int, c call, job map[string]any, drop [][]bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	id, _ := job["id"].(string)
	audio, err := d.LiveAudio(id)
	if err != nil {
		return err
	}
	name := strings.NewReplacer(" ", "_", "%", "pct", "=", "").Replace(r.String()) + fmt.Sprintf("-call%d", i)
	if err := os.WriteFile(filepath.Join(dir, name+".wav"), audio, 0o644); err != nil {
		return err
	}
	type dumpTurn struct {
		Leg        int     `json:"leg"`
		Start      float64 `json:"start"`
		End        float64 `json:"end"`
		File       string  `json:"file"`
		Transcript string  `json:"transcript"`
	}
	var turns []dumpTurn
	for _, t := range c.turns {
		turns = append(turns, dumpTurn{t.leg, t.start, t.end(), t.u.file, t.u.transcript})
	}
	var lost [][]int
	for _, s := range drop {
		var l []int
		for j, v := range s {
			if v {
				l = append(l, j)
			}
		}
		lost = append(lost, l)
	}
	out, err := json.MarshalIndent(map[string]any{"row": r.String(), "turns": turns, "lost_packets": lost, "job": job}, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name+".json"), out, 0o644)
}

// dumpReference writes each clip's words as a single clip of codec k (the
// clip reference) to dir, for comparing a call's record turn by turn.
func dumpReference(dir string, k codec, texts map[string]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	out, err := json.MarshalIndent(texts, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "reference-"+k.name+".json"), out, 0o644)
}
