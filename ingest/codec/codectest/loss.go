package codectest

// BurstLoss marks lost 20 ms packets of n: bursts of 1 to 3 packets at
// fixed places, about 8 % of them (deterministic, so a test cannot flake).
func BurstLoss(n int) []bool {
	lost := make([]bool, n)
	for i := 7; i < n; i += 23 {
		for k := range 1 + i%3 {
			if i+k < n {
				lost[i+k] = true
			}
		}
	}
	return lost
}
