package api

import (
	"errors"
	"slices"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/earshot-dev/earshot/errcode"
)

// FuzzParseListQuery: any query string either parses into bounds the store
// can serve, or is refused with a message; it never panics.
func FuzzParseListQuery(f *testing.F) {
	for _, s := range []string{
		"",
		"offset=0&limit=20",
		"limit=1000&offset=5",
		"limit=0",
		"limit=1001",
		"offset=-1",
		"offset=9223372036854775808",
		"status=done&status=error,queued",
		"status=done,done,bogus",
		"date=2024-02-29",
		"date=2023-02-29",
		"before_date=2024-01-01T00:00:00Z&after_date=2023-01-01",
		"after_date=not-a-date",
		"custom_metadata[team]=a&custom_metadata[x]=%00",
		"custom_metadata=%7B%22a%22%3A1%7D",
		"%ff%fe=%zz&&&=",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var args fasthttp.Args
		args.Parse(raw)
		q, err := parseListQuery(&args)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("%q: empty error", raw)
			}
			return
		}
		if q.Offset < 0 || q.Limit < 1 || q.Limit > maxLimit {
			t.Fatalf("%q: offset %d limit %d out of bounds", raw, q.Offset, q.Limit)
		}
		for i, st := range q.Statuses {
			if !slices.Contains(statuses, st) || slices.Contains(q.Statuses[:i], st) {
				t.Fatalf("%q: statuses %v", raw, q.Statuses)
			}
		}
		if !q.After.IsZero() && !q.Before.IsZero() && args.Has("date") && !q.After.Before(q.Before) {
			t.Fatalf("%q: date range %v..%v is empty", raw, q.After, q.Before)
		}
	})
}

// FuzzDecodeClientMessage: a live WebSocket text frame is either one of the
// two known messages or a bad-message error (close 4400); never a panic and
// never audio that was not in the frame.
func FuzzDecodeClientMessage(f *testing.F) {
	for _, s := range []string{
		`{"type":"audio_chunk","data":{"chunk":"AAEC"}}`,
		`{"type":"audio_chunk","data":{"chunk":""}}`,
		`{"type":"audio_chunk"}`,
		`{"type":"audio_chunk","data":null}`,
		`{"type":"audio_chunk","data":{"chunk":"!!"}}`,
		`{"type":"audio_chunk","data":{"chunk":"AAEC","x":1}}`,
		`{"type":"stop_recording"}`,
		`{"type":"stop_recording"} {"type":"audio_chunk"}`,
		`{"type":"STOP_RECORDING"}`,
		`{"type":1}`,
		`{"type":"audio_chunk","data":{"chunk":"AAEC"},"extra":true}`,
		`[]`,
		`null`,
		``,
		"\xff\xfe",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		typ, audio, err := decodeClientMessage(data)
		if err != nil {
			var de *errcode.Error
			if !errors.As(err, &de) || de.Kind != errBadMessage {
				t.Fatalf("%q: error %v is not a bad-message error", data, err)
			}
			if typ != "" || audio != nil {
				t.Fatalf("%q: error with type %q and %d bytes", data, typ, len(audio))
			}
			return
		}
		switch typ {
		case "audio_chunk":
			if len(audio)*4 > len(data)*3 {
				t.Fatalf("%q: %d audio bytes from a %d-byte frame", data, len(audio), len(data))
			}
		case "stop_recording":
			if audio != nil {
				t.Fatalf("%q: stop_recording carries audio", data)
			}
		default:
			t.Fatalf("%q: accepted type %q", data, typ)
		}
	})
}
