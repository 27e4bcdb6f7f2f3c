package media

// blockSamples is the size of the blocks a channelBuf gathers samples in
// once its preallocated slice is full: 4 s at 16 kHz, 128 KiB.
const blockSamples = 1 << 16

// channelBuf gathers one channel of ffmpeg's output: first into a slice
// preallocated from the length ffprobe announced, then, past it (a length
// unknown or short), into fixed blocks joined once at the end. Growing one
// slice with append instead copies it at every step and leaves each old
// copy to the collector: a 219 MB decode peaked at 824 MB that way.
// Joining holds the channel twice for a moment, at most.
type channelBuf struct {
	head   []int16   // preallocated; filled first
	blocks [][]int16 // past head's capacity, each of capacity blockSamples
}

func newChannelBuf(expect int64) *channelBuf {
	return &channelBuf{head: make([]int16, 0, expect)}
}

// write appends p.
func (b *channelBuf) write(p []int16) {
	n := min(len(p), cap(b.head)-len(b.head))
	b.head = append(b.head, p[:n]...)
	for p = p[n:]; len(p) > 0; {
		last := len(b.blocks) - 1
		if last < 0 || len(b.blocks[last]) == blockSamples {
			b.blocks = append(b.blocks, make([]int16, 0, blockSamples))
			last++
		}
		n := min(len(p), blockSamples-len(b.blocks[last]))
		b.blocks[last] = append(b.blocks[last], p[:n]...)
		p = p[n:]
	}
}

// samples returns everything written as one slice: the preallocated one
// when it held it all, else a new one joining it and the blocks. b is
// empty afterwards.
func (b *channelBuf) samples() []int16 {
	out := b.head
	if len(b.blocks) > 0 {
		n := len(b.head)
		for _, bl := range b.blocks {
			n += len(bl)
		}
		out = make([]int16, 0, n)
		out = append(out, b.head...)
		for _, bl := range b.blocks {
			out = append(out, bl...)
		}
	}
	*b = channelBuf{}
	return out
}
