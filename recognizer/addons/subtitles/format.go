package subtitles

import (
	"fmt"
	"strconv"
	"strings"
)

// render writes captions as SRT (SubRip: index, "HH:MM:SS,mmm -->
// HH:MM:SS,mmm", rows, blank line) or WebVTT (W3C WebVTT: "WEBVTT"
// header, cues with "." before the milliseconds, text escaped).
func render(caps []caption, format string) string {
	var b strings.Builder
	vtt := format == FormatVTT
	if vtt {
		b.WriteString("WEBVTT\n\n")
	}
	for i, c := range caps {
		b.WriteString(strconv.Itoa(i + 1))
		b.WriteByte('\n')
		b.WriteString(timestamp(c.start, vtt))
		b.WriteString(" --> ")
		b.WriteString(timestamp(c.end, vtt))
		b.WriteByte('\n')
		for _, r := range c.rows {
			if vtt {
				r = vttEscaper.Replace(r)
			} else {
				r = strings.ReplaceAll(r, "-->", "->")
			}
			b.WriteString(r)
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// vttEscaper escapes what WebVTT cue text may not hold literally.
var vttEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// timestamp formats milliseconds as HH:MM:SS,mmm (SRT) or HH:MM:SS.mmm.
func timestamp(ms int64, vtt bool) string {
	sep := ","
	if vtt {
		sep = "."
	}
	return fmt.Sprintf("%02d:%02d:%02d%s%03d", ms/3600000, ms/60000%60, ms/1000%60, sep, ms%1000)
}
