package web

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// TokenFile is the file in the data directory that keeps a generated gateway token.
const TokenFile = "gateway-token"

// LoadOrCreateToken returns the token kept in dataDir, generating and storing one (mode 0600)
// when there is none; created says whether it was generated now.
func LoadOrCreateToken(dataDir string) (token string, created bool, err error) {
	path := filepath.Join(dataDir, TokenFile)
	if b, err := os.ReadFile(path); err == nil {
		if t := strings.TrimSpace(string(b)); t != "" {
			return t, false, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", false, fmt.Errorf("web: token: %w", err)
	}
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", false, fmt.Errorf("web: token: %w", err)
	}
	token = hex.EncodeToString(b[:])
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", false, fmt.Errorf("web: token: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(token+"\n"), 0o600); err != nil {
		return "", false, fmt.Errorf("web: token: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", false, fmt.Errorf("web: token: %w", err)
	}
	return token, true, nil
}

// ReadToken returns the token kept in dataDir, or "" when there is none (for reef status).
func ReadToken(dataDir string) string {
	b, err := os.ReadFile(filepath.Join(dataDir, TokenFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
