package recognizer

// BoxOpen is how many segments b counts as decoding (tests of the
// external package).
func BoxOpen(b *BoxLoad) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.open
}
