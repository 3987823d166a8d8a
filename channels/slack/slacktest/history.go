package slacktest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// eventTypeRE is what Slack takes as a metadata event_type: a short alphanumeric name.
var eventTypeRE = regexp.MustCompile(`^[A-Za-z0-9_]{1,255}$`)

// metadataOf checks a message's metadata argument (a JSON string, as slack-go sends it); it
// returns the metadata (nil when none) or Slack's error.
func metadataOf(v url.Values) (json.RawMessage, string) {
	raw := v.Get("metadata")
	if raw == "" {
		return nil, ""
	}
	if len(raw) > MaxMetadata {
		return nil, "metadata_too_large"
	}
	var md struct {
		EventType    any             `json:"event_type"`
		EventPayload json.RawMessage `json:"event_payload"`
	}
	if json.Unmarshal([]byte(raw), &md) != nil {
		return nil, "invalid_metadata_format"
	}
	et, _ := md.EventType.(string)
	payload := bytes.TrimSpace(md.EventPayload)
	if !eventTypeRE.MatchString(et) || len(payload) == 0 || payload[0] != '{' {
		return nil, "invalid_metadata_schema"
	}
	var compact bytes.Buffer
	if json.Compact(&compact, []byte(raw)) != nil {
		return nil, "invalid_metadata_format"
	}
	return compact.Bytes(), ""
}

// wire is a message as the Web API returns it; metadata only when asked for. s.mu is held.
func (s *Server) wire(m *Message, metadata bool) map[string]any {
	out := map[string]any{"type": "message", "text": m.Text, "user": m.User, "ts": m.TS}
	if m.ThreadTS != "" {
		out["thread_ts"] = m.ThreadTS
	}
	if m.Bot {
		out["bot_id"] = "BFAKE"
	}
	if metadata && m.Metadata != nil {
		out["metadata"] = m.Metadata
	}
	return out
}

// tsNum orders message timestamps ("secs.micros"); ok is false for anything else.
func tsNum(ts string) (int64, bool) {
	sec, frac, _ := strings.Cut(ts, ".")
	a, err := strconv.ParseInt(sec, 10, 64)
	if err != nil || len(frac) > 6 {
		return 0, false
	}
	b := int64(0)
	if frac != "" {
		if b, err = strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64); err != nil {
			return 0, false
		}
	}
	return a*1_000_000 + b, true
}

// window is the part of a conversation a history call asks for.
type window struct {
	oldest, latest int64
	inclusive      bool
	limit, offset  int
	metadata       bool
}

// readWindow reads oldest, latest, inclusive, limit (default 100; 1 to 999), cursor and
// include_all_metadata; it returns Slack's error for a bad one.
func readWindow(v url.Values) (window, string) {
	w := window{latest: 1 << 62, limit: 100}
	w.inclusive = v.Get("inclusive") == "1" || v.Get("inclusive") == "true"
	w.metadata = v.Get("include_all_metadata") == "1" || v.Get("include_all_metadata") == "true"
	var ok bool
	if o := v.Get("oldest"); o != "" {
		if w.oldest, ok = tsNum(o); !ok {
			return w, "invalid_ts_oldest"
		}
	}
	if l := v.Get("latest"); l != "" {
		if w.latest, ok = tsNum(l); !ok {
			return w, "invalid_ts_latest"
		}
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 {
			return w, "invalid_limit"
		}
		w.limit = min(n, 999)
	}
	if c := v.Get("cursor"); c != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(c, "next:"))
		if err != nil || !strings.HasPrefix(c, "next:") || n < 0 {
			return w, "invalid_cursor"
		}
		w.offset = n
	}
	return w, ""
}

// in reports whether a message's ts lies in the window.
func (w window) in(ts string) bool {
	n, _ := tsNum(ts)
	if w.inclusive {
		return n >= w.oldest && n <= w.latest
	}
	return n > w.oldest && n < w.latest
}

// page answers one page of msgs (already in the method's order).
func (s *Server) page(rw http.ResponseWriter, w window, msgs []*Message) {
	var out []map[string]any
	end := min(len(msgs), w.offset+w.limit)
	for _, m := range msgs[min(w.offset, len(msgs)):end] {
		out = append(out, s.wire(m, w.metadata))
	}
	if out == nil {
		out = []map[string]any{}
	}
	body := map[string]any{"ok": true, "messages": out, "has_more": end < len(msgs)}
	if end < len(msgs) {
		body["response_metadata"] = map[string]any{"next_cursor": "next:" + strconv.Itoa(end)}
	}
	reply(rw, body)
}

// history answers conversations.history: the channel's top-level messages in the window,
// newest first.
func (s *Server) history(rw http.ResponseWriter, v url.Values) {
	ch := v.Get("channel")
	if ch == "" || s.gone[ch] {
		fail(rw, "channel_not_found")
		return
	}
	w, bad := readWindow(v)
	if bad != "" {
		fail(rw, bad)
		return
	}
	var msgs []*Message
	all := s.msgs[ch]
	for i := len(all) - 1; i >= 0; i-- {
		m := all[i]
		if !m.Deleted && (m.ThreadTS == "" || m.ThreadTS == m.TS) && w.in(m.TS) {
			msgs = append(msgs, m)
		}
	}
	s.page(rw, w, msgs)
}

// replies answers conversations.replies: the thread's parent, then its replies in the
// window, oldest first.
func (s *Server) replies(rw http.ResponseWriter, v url.Values) {
	ch, ts := v.Get("channel"), v.Get("ts")
	if ch == "" || s.gone[ch] {
		fail(rw, "channel_not_found")
		return
	}
	parent := s.byTS[ch+"/"+ts]
	if ts == "" || parent == nil || parent.Deleted {
		fail(rw, "thread_not_found")
		return
	}
	w, bad := readWindow(v)
	if bad != "" {
		fail(rw, bad)
		return
	}
	msgs := []*Message{parent}
	for _, m := range s.msgs[ch] {
		if m != parent && !m.Deleted && m.ThreadTS == ts && w.in(m.TS) {
			msgs = append(msgs, m)
		}
	}
	s.page(rw, w, msgs)
}
