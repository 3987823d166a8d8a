package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// The control socket's sessions routes: a running gateway reads its own database for
// `reef sessions` and adds which sessions are live.
//
//	GET /sessions?agent=&channel=&limit=   sessionList
//	GET /sessions/show?key=&n=             sessionDetail
//	GET /sessions/export?key=              transcript
//
// An unknown or ambiguous key answers 404 with the header keyErrorHeader and the message.

const keyErrorHeader = "Reef-Key-Error"

// serveSessions adds the sessions routes to mux.
func serveSessions(mux *http.ServeMux, src storeSessions) {
	mux.HandleFunc("GET /sessions", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		limit, err := strconv.Atoi(cmp.Or(q.Get("limit"), "0"))
		if err != nil || limit < 0 {
			http.Error(w, "limit must be a number ≥ 0", http.StatusBadRequest)
			return
		}
		list, err := src.list(sessionFilter{Agent: q.Get("agent"), Channel: q.Get("channel"), Limit: limit})
		replyJSON(w, list, err)
	})
	mux.HandleFunc("GET /sessions/show", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(cmp.Or(r.URL.Query().Get("n"), "20"))
		if err != nil || n < 0 {
			http.Error(w, "n must be a number ≥ 0", http.StatusBadRequest)
			return
		}
		d, err := src.show(r.URL.Query().Get("key"), n)
		replyJSON(w, d, err)
	})
	mux.HandleFunc("GET /sessions/export", func(w http.ResponseWriter, r *http.Request) {
		tr, err := src.export(r.URL.Query().Get("key"))
		replyJSON(w, tr, err)
	})
}

func replyJSON(w http.ResponseWriter, v any, err error) {
	var ke *keyError
	switch {
	case errors.As(err, &ke):
		w.Header().Set(keyErrorHeader, "1")
		http.Error(w, ke.Error(), http.StatusNotFound)
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	default:
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
}

// gatewayLive returns the liveFunc of a running gateway: the keys of its live sessions if
// the runtime can list them (a LiveSessionKeys method), else "cannot tell".
func gatewayLive(rt any) liveFunc {
	l, ok := rt.(interface{ LiveSessionKeys() []string })
	if !ok {
		return func() (map[string]bool, bool) { return nil, false }
	}
	return func() (map[string]bool, bool) {
		keys := map[string]bool{}
		for _, k := range l.LiveSessionKeys() {
			keys[k] = true
		}
		return keys, true
	}
}

// controlSessions reads sessions through a running gateway's control socket.
type controlSessions struct{ c *controlClient }

func (s controlSessions) list(f sessionFilter) (sessionList, error) {
	var out sessionList
	q := url.Values{"agent": {f.Agent}, "channel": {f.Channel}, "limit": {strconv.Itoa(f.Limit)}}
	return out, s.c.getJSON("/sessions", q, &out)
}

func (s controlSessions) show(key string, n int) (sessionDetail, error) {
	var out sessionDetail
	return out, s.c.getJSON("/sessions/show", url.Values{"key": {key}, "n": {strconv.Itoa(n)}}, &out)
}

func (s controlSessions) export(key string) (transcript, error) {
	var out transcript
	return out, s.c.getJSON("/sessions/export", url.Values{"key": {key}}, &out)
}

// getJSON GETs path with query q from the running reef and decodes the answer into v.
func (c *controlClient) getJSON(path string, q url.Values, v any) error {
	resp, err := c.http.Get("http://reef" + path + "?" + q.Encode())
	if err != nil {
		return fmt.Errorf("running reef: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		msg := strings.TrimSpace(string(b))
		switch {
		case resp.Header.Get(keyErrorHeader) != "":
			return &keyError{msg}
		case resp.StatusCode == http.StatusNotFound:
			return fmt.Errorf("the running reef does not serve %s (is it older than this command? restart it)", path)
		}
		return fmt.Errorf("running reef: %s", msg)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("running reef: %s: %w", path, err)
	}
	return nil
}
