package actor

import (
	"crypto/rand"
	"encoding/base64"
)

// reef patch: the system ID was github.com/lithammer/shortuuid/v4's New() (a random UUID,
// base57, 22 characters). This is 128 random bits too, URL-safe base64, 22 characters.
func newSystemID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("actor: no randomness for the system ID: " + err.Error())
	}

	return base64.RawURLEncoding.EncodeToString(b[:])
}
