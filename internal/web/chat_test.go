package web

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels/webchat"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// The fake backend's ChatBackend side: records in a map, every change recorded.

func (b *fakeBackend) Chats(context.Context) (map[string]Chat, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]Chat{}
	for k, v := range b.chats {
		out[k] = v
	}
	return out, nil
}

func (b *fakeBackend) PutChat(_ context.Context, c Chat) error {
	b.mu.Lock()
	if b.chats == nil {
		b.chats = map[string]Chat{}
	}
	b.chats[c.ID] = c
	b.mu.Unlock()
	return nil
}

func (b *fakeBackend) ChatModels(context.Context, string) ([]string, error) {
	return []string{"openai/test-model", "openai/" + canary}, nil
}

// chatActions are WebChat's POST routes with a valid body for the conversation "owner".
var chatActions = []struct{ path, body string }{
	{"/chat/new", ""},
	{"/chat/rename", "chat=owner&title=Plans"},
	{"/chat/delete", "chat=owner"},
	{"/chat/stop", "chat=owner"},
	{"/chat/model", "chat=owner&model=openai/test-model"},
	{"/chat/think", "chat=owner&level=high"},
	{"/chat/send", "chat=owner&text=hi"},
}

const formType = "application/x-www-form-urlencoded"

func TestChatActionsNeedTheTokenAndCSRF(t *testing.T) {
	r := newRig(t)
	for _, a := range chatActions {
		if resp := r.do(t, "POST", a.path, "", "", formType, a.body); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s without the token: %d, want 401", a.path, resp.StatusCode)
		}
		for _, csrf := range []string{"", "wrong", r.srv.auth.session()} {
			if resp := r.do(t, "POST", a.path, "cookie", csrf, formType, a.body); resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s with the cookie and CSRF %q: %d, want 403", a.path, csrf, resp.StatusCode)
			}
		}
	}
	// A multipart upload without the CSRF token is refused before its files are kept.
	body, ctype := multipartBody(t, map[string]string{"chat": "owner", "text": "look"}, "a.png", "image/png", []byte("PNG"))
	if resp := r.do(t, "POST", "/chat/send", "cookie", "", ctype, body.String()); resp.StatusCode != http.StatusForbidden {
		t.Errorf("upload without CSRF: %d, want 403", resp.StatusCode)
	}
	if got, _ := r.backend.Chats(context.Background()); len(got) != 0 || len(r.backend.recorded()) != 0 {
		t.Errorf("requests without a CSRF token changed things: %v", got)
	}
	select {
	case in := <-r.inbound:
		t.Errorf("a request without a CSRF token reached the agent: %+v", in)
	default:
	}
	for _, a := range chatActions { // and with it each works
		resp := r.do(t, "POST", a.path, "cookie", r.srv.auth.csrf(), formType, a.body)
		if resp.StatusCode >= 300 {
			t.Errorf("%s with the CSRF token: %d %s", a.path, resp.StatusCode, readAll(t, resp))
		}
	}
}

func TestChatCommandsGoThroughTheConversation(t *testing.T) {
	r := newRig(t)
	second := webchat.NewChat()
	for _, tt := range []struct{ path, body, want string }{
		{"/chat/stop", "chat=" + second, "/stop"},
		{"/chat/model", "chat=" + second + "&model=anthropic/claude-x", "/model anthropic/claude-x"},
		{"/chat/think", "chat=owner&level=low", "/think low"},
	} {
		resp := r.do(t, "POST", tt.path, "bearer", "", formType, tt.body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", tt.path, resp.StatusCode, readAll(t, resp))
		}
		in := <-r.inbound
		chat, _ := url.ParseQuery(tt.body)
		if in.Text != tt.want || in.ChatID != chat.Get("chat") || in.SenderID != chat.Get("chat") {
			t.Errorf("%s delivered %q to %s/%s, want %q to %s", tt.path, in.Text, in.ChatID, in.SenderID, tt.want, chat.Get("chat"))
		}
	}
	for _, tt := range []struct{ path, body string }{
		{"/chat/model", "chat=owner&model=" + url.QueryEscape("x\n/approve 1")},
		{"/chat/model", "chat=owner&model=" + url.QueryEscape("a b")},
		{"/chat/think", "chat=owner&level=extreme"},
		{"/chat/stop", "chat=" + url.QueryEscape("../owner")},
		{"/chat/stop", ""},
		{"/chat/rename", "chat=owner&title=%20"},
		{"/chat/rename", "chat=owner&title=" + strings.Repeat("x", 121)},
	} {
		if resp := r.do(t, "POST", tt.path, "bearer", "", formType, tt.body); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s %q: %d, want 400", tt.path, tt.body, resp.StatusCode)
		}
	}
	if len(r.inbound) != 0 {
		t.Errorf("refused commands reached the agent: %d", len(r.inbound))
	}
}

func TestChatConversationsNewRenameDelete(t *testing.T) {
	r := newRig(t)
	resp := r.do(t, "POST", "/chat/new", "bearer", "", formType, "")
	var made struct{ Chat string }
	if err := json.Unmarshal([]byte(readAll(t, resp)), &made); err != nil || !webchat.ValidChat(made.Chat) {
		t.Fatalf("new chat: %v %+v", err, made)
	}
	if resp := r.do(t, "POST", "/chat/rename", "bearer", "", formType, "chat="+made.Chat+"&title=Trip+plans+"+canary); resp.StatusCode != 200 {
		t.Fatalf("rename: %d", resp.StatusCode)
	}
	page := readAll(t, r.do(t, "GET", "/chat?c="+made.Chat, "bearer", "", "", ""))
	for _, want := range []string{"Trip plans", `data-chat="` + made.Chat + `"`, `href="/chat?c=owner"`, "openai/test-model", "Hi! What shall we do?", "What can you do for me?"} {
		if !strings.Contains(page, want) {
			t.Errorf("the chat page lacks %q", want)
		}
	}
	if strings.Contains(page, canary) {
		t.Error("the chat page shows a secret")
	}
	// The first message names a conversation that has no name.
	third := webchat.NewChat()
	if resp := r.do(t, "POST", "/chat/send", "bearer", "", "application/json", `{"chat":"`+third+`","text":"Plan my week\nin detail"}`); resp.StatusCode != 202 {
		t.Fatalf("send: %d", resp.StatusCode)
	}
	<-r.inbound
	if got := r.backend.chats[third].Title; got != "Plan my week …" {
		t.Errorf("title from the first message %q", got)
	}
	// Deleting the one with a session stops its run (through /stop) and hides it.
	if resp := r.do(t, "POST", "/chat/delete", "bearer", "", formType, "chat=owner"); resp.StatusCode != 200 {
		t.Fatalf("delete: %d", resp.StatusCode)
	}
	if in := <-r.inbound; in.Text != "/stop" || in.ChatID != "owner" {
		t.Errorf("delete delivered %+v, want /stop", in)
	}
	page = readAll(t, r.do(t, "GET", "/chat", "bearer", "", "", ""))
	if strings.Contains(page, `href="/chat?c=owner"`) || !strings.Contains(page, `href="/chat?c=`+made.Chat+`"`) {
		t.Errorf("after deleting owner the list is wrong:\n%s", page)
	}
	// ... and it can still be opened (from Sessions) and continued.
	if page := readAll(t, r.do(t, "GET", "/chat?c=owner", "bearer", "", "", "")); !strings.Contains(page, `data-chat="owner"`) {
		t.Error("a deleted conversation cannot be opened")
	}
	if resp := r.do(t, "POST", "/chat/send", "bearer", "", "application/json", `{"chat":"owner","text":"back again"}`); resp.StatusCode != 202 {
		t.Fatalf("send: %d", resp.StatusCode)
	}
	<-r.inbound
	if r.backend.chats["owner"].Deleted {
		t.Error("writing to a deleted conversation did not bring it back")
	}
	if resp := r.do(t, "GET", "/chat?c=Bad/Id", "bearer", "", "", ""); resp.StatusCode != 400 {
		t.Errorf("a bad chat id: %d", resp.StatusCode)
	}
}

func TestSessionsViewOffersToContinueWebChat(t *testing.T) {
	r := newRig(t)
	page := readAll(t, r.do(t, "GET", "/sessions/view?key=agent:main:webchat:direct:owner", "bearer", "", "", ""))
	if !strings.Contains(page, `href="/chat?c="`) {
		t.Errorf("a WebChat session's page has no continue link")
	}
}

func TestChatEventsKeepConversationsApart(t *testing.T) {
	r := newRig(t)
	two := webchat.NewChat()
	s1, s2 := r.stream(t, "/chat/events?c=owner"), r.stream(t, "/chat/events?c="+two)
	r.chat.Send(context.Background(), messages.Outbound{SessionKey: "agent:main:webchat:direct:" + two, ChatID: two, Text: "to two: **bold** <img src=x onerror=alert(1)>"})
	r.chat.Send(context.Background(), messages.Outbound{SessionKey: "agent:main:webchat:direct:owner", ChatID: "owner", Text: "to one"})
	if ev, data := s1.next(t); ev != "chat" || !strings.Contains(data, `"to one"`) {
		t.Errorf("conversation one got %s %s", ev, data)
	}
	ev, data := s2.next(t)
	if ev != "chat" || !strings.Contains(data, `"chat":"`+two+`"`) {
		t.Fatalf("conversation two got %s %s", ev, data)
	}
	var got struct{ Text, HTML string }
	json.Unmarshal([]byte(data), &got)
	if !strings.Contains(got.HTML, "<strong>bold</strong>") || strings.Contains(got.HTML, "<img") || !strings.Contains(got.HTML, "&lt;img") {
		t.Errorf("reply html %q", got.HTML)
	}
}

// TestChatEventsShowTextThatCameBeforeTheRunsStart: a new conversation's page learns its
// session's key from the run's start; text the model wrote before that start reached the page
// (the bus and the channel are two streams; in a cluster the run is on another node) is shown
// after it, in order, and another conversation's text is not.
func TestChatEventsShowTextThatCameBeforeTheRunsStart(t *testing.T) {
	r := newRig(t)
	chat := webchat.NewChat()
	key := "agent:main:webchat:direct:" + chat
	s := r.stream(t, "/chat/events?c="+chat)
	delta := func(session, text string) {
		r.bus.Publish(messages.RunEvent{Session: session, Run: "r1", Kind: messages.RunTextDelta, Text: text})
	}
	delta(key, "Hel")
	delta("agent:main:telegram:direct:42", "not this chat's")
	delta(key, "lo")
	time.Sleep(50 * time.Millisecond) // lets the page take the text first (it passes either way after the fix)
	r.chat.Progress(context.Background(), messages.TurnEvent{Kind: messages.TurnStarted, SessionKey: key, ChatID: chat})
	delta(key, " world")
	got := make(chan [2]string, 64)
	go func() { // the page's events, until it ends
		var ev, data string
		for s.sc.Scan() {
			switch line := s.sc.Text(); {
			case strings.HasPrefix(line, "event: "):
				ev = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = strings.TrimPrefix(line, "data: ")
			case line == "" && ev != "":
				got <- [2]string{ev, data}
				ev, data = "", ""
			}
		}
	}()
	next := func() (string, string) {
		select {
		case e := <-got:
			return e[0], e[1]
		case <-time.After(10 * time.Second):
			t.Fatal("the page got nothing more within 10 s")
			return "", ""
		}
	}
	if ev, data := next(); ev != "chat" || !strings.Contains(data, `"started"`) {
		t.Fatalf("first event %s %s; want the run's start", ev, data)
	}
	var text strings.Builder
	for text.Len() < len("Hello world") {
		ev, data := next()
		var d struct{ Text string }
		if ev != "delta" || json.Unmarshal([]byte(data), &d) != nil {
			t.Fatalf("got %s %s; want the run's text", ev, data)
		}
		text.WriteString(d.Text)
	}
	if text.String() != "Hello world" {
		t.Fatalf("the page showed %q; want Hello world", text.String())
	}
}

func multipartBody(t *testing.T, fields map[string]string, name, ctype string, data []byte) (*bytes.Buffer, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	if name != "" {
		h := make(map[string][]string)
		h["Content-Disposition"] = []string{`form-data; name="file"; filename="` + name + `"`}
		h["Content-Type"] = []string{ctype}
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	mw.Close()
	return &b, mw.FormDataContentType()
}

func TestChatUploadReachesTheChannelsMediaPath(t *testing.T) {
	r := newRig(t)
	chat := webchat.New(webchat.Config{UploadDir: t.TempDir(), MaxFile: func(k messages.MediaKind) int64 { return 16 }})
	srv, err := New(Config{Listen: "127.0.0.1:0", Token: testToken, Backend: r.backend, Chat: chat}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan messages.Inbound, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go chat.Run(ctx, func(_ context.Context, in messages.Inbound) error { got <- in; return nil })
	waitFor(t, "the chat to run", func() bool { return chat.Post(ctx, webchat.Message{}) != webchat.ErrNotRunning })
	send := func(name string, data []byte) *http.Response {
		body, ctype := multipartBody(t, map[string]string{"chat": "owner", "text": "what is this?"}, name, "image/png", data)
		req, _ := http.NewRequest("POST", "/chat/send", body)
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", ctype)
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		return rec.Result()
	}
	if resp := send("cat.png", []byte("\x89PNG-cat")); resp.StatusCode != 202 {
		t.Fatalf("upload: %d", resp.StatusCode)
	}
	in := <-got
	if in.Text != "what is this?" || len(in.Media) != 1 || in.Media[0].Kind != messages.MediaImage || in.Media[0].Name != "cat.png" || !in.Media[0].Pending() {
		t.Fatalf("delivered %+v", in)
	}
	rc, err := chat.Fetch(ctx, in.Media[0]) // what the Connector's media fetch calls
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(rc); string(b) != "\x89PNG-cat" {
		t.Errorf("fetched %q", b)
	}
	rc.Close()
	if resp := send("big.png", bytes.Repeat([]byte("x"), 17)); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a file over the media limit: %d, want 413", resp.StatusCode)
	}
	select {
	case in := <-got:
		t.Errorf("a refused upload was delivered: %+v", in)
	case <-time.After(50 * time.Millisecond):
	}
}

func TestChatHistoryRendersMarkdownSafely(t *testing.T) {
	c := Conversation{Info: persistence.SessionInfo{Key: "k"}, Entries: []persistence.Entry{
		{Seq: 1, ChatMessage: messages.ChatMessage{Role: messages.RoleUser, Content: "<script>alert(1)</script>"}},
		{Seq: 2, ChatMessage: messages.ChatMessage{Role: messages.RoleAssistant, Content: "```go\nx := 1\n```\n<style>*{}</style> [x](javascript:alert(1))"}},
	}}
	items := chatItems(c)
	if len(items) != 2 || items[0].HTML != "" || items[0].Text != "<script>alert(1)</script>" {
		t.Fatalf("items %+v", items)
	}
	h := string(items[1].HTML)
	if !strings.Contains(h, `<pre><code class="language-go">x := 1</code></pre>`) || strings.Contains(h, "<style") || strings.Contains(h, "href") {
		t.Errorf("answer html %q", h)
	}
}
