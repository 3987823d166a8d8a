package memory

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDotAndView: the eight-sum dot product agrees with a plain one, for every length, and
// a stored vector viewed in place (at any alignment) is the vector that was stored.
func TestDotAndView(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := range 40 {
		a, b := make([]float32, n), make([]float32, n)
		var want float64
		for i := range a {
			a[i], b[i] = r.Float32()-0.5, r.Float32()-0.5
			want += float64(a[i]) * float64(b[i])
		}
		if got := dot(a, b); math.Abs(float64(got)-want) > 1e-5 {
			t.Errorf("n=%d: dot %v, want %v", n, got, want)
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
			if n > 0 && dotBytes(a, raw[off:]) != dotBytes(a, encodeVector(b)) {
				t.Fatal("dotBytes depends on alignment")
			}
		}
	}
}
