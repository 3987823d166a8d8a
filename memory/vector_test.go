package memory

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDotAndView: dot (the vector unit's where there is one) and dotGo agree with a plain
// sum in float64, for every length around the 8- and 32-float steps and a 1536-dim
// vector, also over a stored vector viewed in place at any alignment, which is the vector
// that was stored.
func TestDotAndView(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range append(rangeN(100), 1535, 1536, 1537) {
		a, b := make([]float32, n), make([]float32, n)
		var want float64
		for i := range a {
			a[i], b[i] = r.Float32()-0.5, r.Float32()-0.5
			want += float64(a[i]) * float64(b[i])
		}
		if got := dot(a, b); math.Abs(float64(got)-want) > 1e-4 {
			t.Errorf("n=%d: dot %v, want %v", n, got, want)
		}
		if got := dotGo(a, b); math.Abs(float64(got)-want) > 1e-4 {
			t.Errorf("n=%d: dotGo %v, want %v", n, got, want)
		}
		for off := range 4 {
			raw := make([]byte, 4*n+off)
			copy(raw[off:], encodeVector(b))
			v := viewVector(raw[off:], make([]float32, 0, n))
			if len(v) != n && !(n == 0 && v == nil) {
				t.Fatalf("n=%d off=%d: %d floats", n, off, len(v))
			}
			for i := range v {
				if v[i] != b[i] {
					t.Fatalf("n=%d off=%d: float %d is %v, want %v", n, off, i, v[i], b[i])
				}
			}
			if got := dot(a, v); math.Abs(float64(got)-want) > 1e-4 {
				t.Errorf("n=%d off=%d: dot over the stored bytes %v, want %v", n, off, got, want)
			}
			if n > 0 && dotBytes(a, raw[off:]) != dotBytes(a, encodeVector(b)) {
				t.Fatal("dotBytes depends on alignment")
			}
		}
	}
}

func rangeN(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
