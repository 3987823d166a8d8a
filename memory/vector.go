package memory

// dotGo is the dot product of two vectors of the same length in plain Go, in four running
// sums (they let the multiplications overlap; eight measured no faster, BenchmarkMemoryDot).
// Slicing b to a's length lets the compiler drop most bounds checks; walking by sub-slices
// (a = a[4:]) measured twice as slow. dot uses it where there is no vector unit to use.
func dotGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}
