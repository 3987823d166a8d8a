//go:build amd64 && !purego

package memory

import "golang.org/x/sys/cpu"

// useAVX2 says whether this CPU has the 8-wide float32 multiply-add dotAVX2 needs (every
// x86-64 CPU sold since about 2015).
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// dot is the dot product of two vectors of the same length: eight floats at a time where
// the CPU can (dotAVX2), else plain Go. Scoring 15,000 1536-dim vectors is 23 million
// multiply-adds a search; Go does not vectorize loops, and plain Go is bound at about one a
// cycle by its loads (BenchmarkMemoryDot).
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	if useAVX2 {
		return dotAVX2(a, b)
	}
	return dotGo(a, b)
}

// dotAVX2 is dot in AVX2 and FMA (dot_amd64.s). len(b) >= len(a); unaligned is fine.
//
//go:noescape
func dotAVX2(a, b []float32) float32
