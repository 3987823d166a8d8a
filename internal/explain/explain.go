// Package explain says in plain words why a call to a server failed — "cannot resolve
// api.telegram.org (DNS)", "127.0.0.1:8089 refused the connection", "token refused (401)" —
// for the places a user reads: reef status, the Overview page, a chat's reply. The error
// chain itself stays in the log.
package explain

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
)

// StatusCoder is implemented by errors that carry the HTTP status a server answered
// (providers.APIError, the Telegram client's refusals).
type StatusCoder interface {
	HTTPStatus() int
}

// Failure says why err happened, in plain words, naming server — or, when server is "", the
// host the error names ("the server" when it names none). It returns "" when err is of no
// kind it knows (see Short).
func Failure(err error, server string) string {
	if err == nil {
		return ""
	}
	host := server
	if host == "" {
		host = hostOf(err)
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		name := dnsErr.Name
		if server != "" || name == "" {
			name = host
		}
		if dnsErr.IsNotFound {
			return fmt.Sprintf("cannot resolve %s (DNS: no such host)", name)
		}
		return fmt.Sprintf("cannot resolve %s (DNS)", name)
	}
	if why := tlsFailure(err); why != "" {
		return fmt.Sprintf("TLS with %s failed (%s)", host, why)
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED) && server == "":
		return host + " refused the connection (nothing listens there?)"
	case errors.Is(err, syscall.ECONNREFUSED):
		return host + " refused the connection"
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return "no route to " + host + " (network unreachable)"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.EPIPE):
		return host + " closed the connection"
	case isTimeout(err):
		return host + " did not answer in time (timeout)"
	}
	var sc StatusCoder
	if errors.As(err, &sc) && sc.HTTPStatus() >= 400 {
		return Status(sc.HTTPStatus(), host)
	}
	return ""
}

// Short is Failure, or else the innermost message of err's chain (the cause without the
// wrapping prefixes), on one line.
func Short(err error, server string) string {
	if err == nil {
		return ""
	}
	if s := Failure(err, server); s != "" {
		return s
	}
	inner := err
	for {
		next := errors.Unwrap(inner)
		if next == nil {
			if m, ok := inner.(interface{ Unwrap() []error }); ok && len(m.Unwrap()) > 0 {
				next = m.Unwrap()[0]
			}
		}
		if next == nil || next.Error() == "" {
			break
		}
		inner = next
	}
	msg := strings.Join(strings.Fields(inner.Error()), " ")
	msg = StripPrefixes(msg)
	if len(msg) > 160 {
		msg = msg[:157] + "..."
	}
	return msg
}

// StripPrefixes drops the "package: " words an error message starts with ("feishu: ",
// "discord: gateway: "), keeping what the message says: "connection limit reached: the app
// already holds ...". A prefix is one word of lower-case letters, digits and '_' or '-'.
func StripPrefixes(msg string) string {
	for {
		i := strings.Index(msg, ": ")
		if i <= 0 || i+2 >= len(msg) || strings.IndexFunc(msg[:i], func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-')
		}) >= 0 {
			return msg
		}
		msg = msg[i+2:]
	}
}

// Status says what an HTTP error status means, in plain words.
func Status(code int, host string) string {
	switch {
	case code == http.StatusUnauthorized:
		return "token refused (401)"
	case code == http.StatusForbidden:
		return "access refused (403)"
	case code == http.StatusNotFound:
		return fmt.Sprintf("%s has no such address (404)", host)
	case code == http.StatusConflict:
		return "another program uses the same token (409)"
	case code == http.StatusTooManyRequests:
		return "rate limited (429)"
	case code == http.StatusServiceUnavailable || code == 529:
		return fmt.Sprintf("%s is overloaded or down (%d)", host, code)
	case code >= 500:
		return fmt.Sprintf("%s had a server error (%d)", host, code)
	}
	return fmt.Sprintf("%s refused the request (%d)", host, code)
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, syscall.ETIMEDOUT) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// tlsFailure names what went wrong in a TLS handshake, or "" when err is no TLS error.
func tlsFailure(err error) string {
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var alert tls.AlertError
	var record tls.RecordHeaderError
	switch {
	case errors.As(err, &unknown):
		return "certificate signed by an unknown authority"
	case errors.As(err, &hostname):
		return "the certificate is for another name"
	case errors.As(err, &invalid):
		if invalid.Reason == x509.Expired {
			return "the certificate expired or is not valid yet"
		}
		return "invalid certificate"
	case errors.As(err, &verify):
		return "certificate not trusted"
	case errors.As(err, &alert):
		return "the server refused the handshake"
	case errors.As(err, &record):
		return "the server does not speak TLS there"
	}
	return ""
}

// hostOf returns the host an error names: its RequestHost (an error that hides its URL), the
// URL's (url.Error), the dialled address (net.OpError), else "the server".
func hostOf(err error) string {
	var rh interface{ RequestHost() string }
	if errors.As(err, &rh) && rh.RequestHost() != "" {
		return rh.RequestHost()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil && u.Host != "" {
			return u.Host
		}
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Addr != nil {
		return op.Addr.String()
	}
	return "the server"
}
