//go:build !amd64 || purego

package memory

// dot is the dot product of two vectors of the same length.
func dot(a, b []float32) float32 { return dotGo(a, b) }
