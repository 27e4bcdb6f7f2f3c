package g722

import (
	"errors"
	"testing"
)

func TestDecode(t *testing.T) {
	d, err := NewDecoder()
	if err != nil {
		t.Fatal(err)
	}
	out, err := d.Decode(make([]byte, 160), []int16{1, 2})
	if err != nil || len(out) != 2+320 || out[0] != 1 || out[1] != 2 {
		t.Fatalf("Decode: %d samples, %v; want the 2 given plus 320", len(out), err)
	}
	if out, _ := d.Decode(nil, nil); len(out) != 0 {
		t.Errorf("nothing decoded to %d samples", len(out))
	}
	d.Close()
	d.Close()
	if _, err := d.Decode([]byte{1}, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v, want ErrClosed", err)
	}
}
