package explain

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

type statusErr int

func (e statusErr) Error() string   { return fmt.Sprintf("HTTP %d: some body text", int(e)) }
func (e statusErr) HTTPStatus() int { return int(e) }

// refused dials a loopback port nobody listens on: a real ECONNREFUSED.
func refused(t *testing.T) (error, string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = http.Get("http://" + addr + "/bot123:secret/getMe")
	if err == nil {
		t.Fatal("a closed port answered")
	}
	return err, addr
}

func TestFailure(t *testing.T) {
	refusedErr, addr := refused(t)
	dns := &url.Error{Op: "Post", URL: "https://api.telegram.org/bot123:secret/getUpdates",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "api.telegram.org", IsNotFound: true}}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	timeout := &url.Error{Op: "Post", URL: "https://api.openai.com/v1/chat/completions", Err: ctx.Err()}
	cert := &url.Error{Op: "Get", URL: "https://example.test/", Err: x509.UnknownAuthorityError{}}
	for _, tc := range []struct {
		name   string
		err    error
		server string
		want   string
	}{
		{"dns", fmt.Errorf("telegram: getUpdates: %w", dns), "", "cannot resolve api.telegram.org (DNS: no such host)"},
		{"dns, server named", dns, "the model's server", "cannot resolve the model's server (DNS: no such host)"},
		{"refused", fmt.Errorf("openai: %w", refusedErr), "", addr + " refused the connection (nothing listens there?)"},
		{"timeout", timeout, "", "api.openai.com did not answer in time (timeout)"},
		{"tls", cert, "", "TLS with example.test failed (certificate signed by an unknown authority)"},
		{"401", fmt.Errorf("telegram: getMe: %w", statusErr(401)), "", "token refused (401)"},
		{"502", statusErr(502), "api.openai.com", "api.openai.com had a server error (502)"},
		{"unknown", errors.New("something odd"), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Failure(tc.err, tc.server)
			if got != tc.want {
				t.Errorf("Failure(%v) = %q, want %q", tc.err, got, tc.want)
			}
			if strings.Contains(got, "secret") {
				t.Errorf("Failure leaks the URL's path: %q", got)
			}
		})
	}
}

func TestShortIsTheInnermostCause(t *testing.T) {
	err := fmt.Errorf("telegram: getUpdates: %w", fmt.Errorf("decode: %w", errors.New("unexpected character 'x'")))
	if got, want := Short(err, ""), "unexpected character 'x'"; got != want {
		t.Errorf("Short = %q, want %q", got, want)
	}
	if got := Short(statusErr(401), ""); got != "token refused (401)" {
		t.Errorf("Short(401) = %q", got)
	}
	if got := Short(errors.New("feishu: a\nb:  c   d"), ""); got != "a b: c d" {
		t.Errorf("Short = %q, want one line without the package's prefix", got)
	}
}
