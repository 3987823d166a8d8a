package mcp

import (
	"bytes"
	"net/http"
	"strings"
	"sync"

	"github.com/rs/zerolog"
)

// withHeaders returns a copy of hc that sets headers on every request.
func withHeaders(hc *http.Client, headers map[string]string) *http.Client {
	c := *hc
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = headerTransport{base: base, headers: headers}
	return &c
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	return t.base.RoundTrip(req)
}

// stderrLog logs a stdio server's stderr line by line at debug level (servers print banners
// and diagnostics there), each line capped and with the configured secrets redacted.
type stderrLog struct {
	log     zerolog.Logger
	secrets []string
	mu      sync.Mutex
	buf     []byte
}

func (w *stderrLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 && len(w.buf) < 4096 {
			return len(p), nil
		}
		if i < 0 {
			i = len(w.buf) - 1
		}
		line := string(w.buf[:i+1])
		w.buf = w.buf[i+1:]
		for _, s := range w.secrets {
			if s != "" {
				line = strings.ReplaceAll(line, s, "[redacted]")
			}
		}
		w.log.Debug().Str("stderr", capText(strings.TrimSpace(line), 500)).Msg("mcp server")
	}
}
