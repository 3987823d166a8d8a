//go:build !(amd64 || arm64)

package memory

import (
	"encoding/binary"
	"math"
)

// viewVector decodes a stored vector (little-endian float32s) into buf, reused from call to
// call: on these CPUs the bytes may be in another order or unaligned reads may trap.
func viewVector(b []byte, buf []float32) []float32 {
	buf = buf[:0]
	for i := 0; i+4 <= len(b); i += 4 {
		buf = append(buf, math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
	}
	return buf
}
