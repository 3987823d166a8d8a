//go:build amd64 || arm64

package memory

import "unsafe"

// viewVector returns a stored vector (little-endian float32s) as []float32 without copying:
// on amd64 and arm64 the stored bytes are already in the CPU's order, and it reads a float32
// at any address, so the bytes bbolt maps are scored where they lie. The slice is valid as
// long as b is (the read transaction); buf is not needed here.
func viewVector(b []byte, _ []float32) []float32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
}
