package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// partialWidth bounds a partial transcript shown in place on a terminal,
// so it stays on one line of a common terminal and can be rewritten.
const partialWidth = 76

// streamPrinter shows a live session's messages as they come: with
// --json every message as the daemon sent it, one per line; otherwise
// each final transcript as a line of its times and text, partial ones as
// lines starting "~ " (on a terminal, one line rewritten in place until
// its final comes), and the daemon's error messages on stderr. Only the
// session's reader calls it while the session runs.
type streamPrinter struct {
	w, errw  io.Writer
	json     bool
	tty      bool // w is a terminal: partials are rewritten in place
	channels int
	partial  bool // a partial is on the terminal's current line
}

func newStreamPrinter(w, errw io.Writer, asJSON bool, channels int) *streamPrinter {
	tty := false
	if f, ok := w.(*os.File); ok && !asJSON {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &streamPrinter{w: w, errw: errw, json: asJSON, tty: tty, channels: channels}
}

// serverMessage is the part of a WebSocket message (docs/PROTOCOL.md,
// "Server to client") the printer reads.
type serverMessage struct {
	Type  string          `json:"type"`
	Error json.RawMessage `json:"error"`
	Data  json.RawMessage `json:"data"`
}

// message shows one message, b as the daemon sent it.
func (p *streamPrinter) message(b []byte) error {
	if p.json {
		_, err := fmt.Fprintf(p.w, "%s\n", b)
		return err
	}
	var m serverMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("the daemon sent a message that is not JSON: %w", err)
	}
	switch m.Type {
	case "transcript":
		var d struct {
			IsFinal   bool      `json:"is_final"`
			Utterance utterance `json:"utterance"`
		}
		if err := json.Unmarshal(m.Data, &d); err != nil {
			return fmt.Errorf("transcript message: %w", err)
		}
		p.transcript(d.Utterance, d.IsFinal)
	case "error":
		var e struct {
			Message string `json:"message"`
		}
		json.Unmarshal(m.Error, &e)
		p.endLine()
		fmt.Fprintf(p.errw, "stream: the daemon says: %s\n", e.Message)
	}
	return nil
}

// transcript prints an utterance: a final as its line, a partial as its
// line after "~ " (on a terminal, in place of the previous partial).
func (p *streamPrinter) transcript(u utterance, final bool) {
	line := u.line(p.channels)
	switch {
	case final && p.tty:
		fmt.Fprintf(p.w, "\r\x1b[K%s\n", line)
		p.partial = false
	case final:
		fmt.Fprintln(p.w, line)
	case p.tty:
		// The text's end, which is what changes, after its times.
		head := "~ " + u.times(p.channels) + " "
		text := []rune(u.Text)
		if room := partialWidth - len(head); len(text) > room {
			text = append([]rune("…"), text[len(text)-room+1:]...)
		}
		fmt.Fprintf(p.w, "\r\x1b[K%s%s", head, string(text))
		p.partial = true
	default:
		fmt.Fprintln(p.w, "~ "+line)
	}
}

// endLine ends a partial left on the terminal's current line.
func (p *streamPrinter) endLine() {
	if p.partial {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.partial = false
	}
}
