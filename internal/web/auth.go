package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"
)

// Authentication: a request carries the gateway token as "Authorization: Bearer <token>"
// (scripts, API clients), or the session cookie the login form set (browsers). The cookie
// holds a MAC of the token, not the token, so it is the same across gateway restarts and
// void when the token changes. Requests authenticated by the cookie that change anything
// must carry the CSRF token (header X-CSRF-Token or form field csrf), also a MAC of the
// token; Bearer requests need none (a browser never adds that header by itself).

const (
	cookieName = "reef_session"
	csrfHeader = "X-CSRF-Token"
	csrfField  = "csrf"
)

// csp is every response's Content-Security-Policy: only this origin's scripts, styles and
// connections; no inline script, no frames, no plugins.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

type auth struct{ key []byte }

func newAuth(token string) auth {
	k := sha256.Sum256([]byte("reef gateway token\x00" + token))
	return auth{key: k[:]}
}

func (a auth) mac(purpose string) string {
	m := hmac.New(sha256.New, a.key)
	m.Write([]byte(purpose))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (a auth) session() string { return a.mac("session") }
func (a auth) csrf() string    { return a.mac("csrf") }

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// check reports whether r is authenticated, and whether it tried the token itself (an
// Authorization header, counted by the rate limit) rather than the cookie. A stale cookie
// (the token changed) is not counted: the browser sends it with every request, and the
// cookie is a 256-bit MAC nobody guesses.
func (a auth) check(r *http.Request, token string) (ok, bearer bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, cred, _ := strings.Cut(h, " ")
		return strings.EqualFold(scheme, "Bearer") && equal(strings.TrimSpace(cred), token), true
	}
	c, err := r.Cookie(cookieName)
	if err != nil {
		return false, false
	}
	return equal(c.Value, a.session()), false
}

// safeMethod: requests that change nothing need no CSRF token.
func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// protect lets authenticated requests through to h: 401 without the token (the login page
// for a browser), 403 for a cookie request that changes something without the CSRF token.
func (s *Server) protect(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" && s.lockedOut(w, r, false) {
			return
		}
		ok, bearer := s.auth.check(r, s.cfg.Token)
		if bearer {
			s.counted(r, ok)
		}
		cookie := ok && !bearer
		if !ok {
			if wantsHTML(r) && r.Method == http.MethodGet {
				w.WriteHeader(http.StatusUnauthorized)
				s.renderLogin(w, r, "")
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="reef"`)
			jsonError(w, http.StatusUnauthorized, "the gateway token is required: send Authorization: Bearer <token>, or log in")
			return
		}
		if cookie && !safeMethod(r.Method) {
			got := r.Header.Get(csrfHeader)
			if got == "" && isForm(r) {
				got = r.PostFormValue(csrfField)
			}
			if !equal(got, s.auth.csrf()) {
				jsonError(w, http.StatusForbidden, "missing or wrong CSRF token: reload the page and try again")
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

func wantsHTML(r *http.Request) bool { return strings.Contains(r.Header.Get("Accept"), "text/html") }

func isForm(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	return strings.HasPrefix(ct, "application/x-www-form-urlencoded") || strings.HasPrefix(ct, "multipart/form-data")
}

// securityHeaders sets the headers every response carries.
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", csp)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.ServeHTTP(w, r)
	})
}

// login checks the form's token and sets the session cookie.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if s.lockedOut(w, r, true) {
		return
	}
	ok := equal(r.PostFormValue("token"), s.cfg.Token)
	s.counted(r, ok)
	if !ok {
		s.log.Warn().Str("remote", r.RemoteAddr).Msg("web: login with a wrong token")
		w.WriteHeader(http.StatusUnauthorized)
		s.renderLogin(w, r, "That is not the gateway token.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.auth.session(), Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: 30 * 24 * 3600})
	http.Redirect(w, r, localPath(r.PostFormValue("next")), http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// localPath returns p when it is a path on this server, else "/": no open redirect.
func localPath(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") {
		return "/"
	}
	return p
}
