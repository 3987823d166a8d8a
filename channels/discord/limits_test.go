package discord_test

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reefgw/reef/channels/discord/discordtest"
	"github.com/reefgw/reef/messages"
)

// charts writes n files of size bytes each into a new workspace and returns it and their Media.
func charts(t *testing.T, n, size int) (string, []messages.Media) {
	t.Helper()
	ws := t.TempDir()
	var ms []messages.Media
	for i := range n {
		name := fmt.Sprintf("chart%d.png", i+1)
		data := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{byte(i + 1)}, size-8)...)
		if err := os.WriteFile(filepath.Join(ws, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		ms = append(ms, messages.Media{Root: ws, Path: name})
	}
	return ws, ms
}

// received returns the files the bot attached in channel, by name, with their sizes.
func received(srv *discordtest.Server, channel string) map[string]int {
	got := map[string]int{}
	for _, m := range srv.SentMessages(channel) {
		for name, data := range srv.Files(m.ID) {
			got[name] = len(data)
		}
	}
	return got
}

// TestFakeRefusesRequestsOverTheCap: the fake, like Discord, refuses a Create Message request
// over 25 MiB in all with 413 and code 40005, even when each file is under 10 MiB.
func TestFakeRefusesRequestsOverTheCap(t *testing.T) {
	srv := discordtest.New(t, discordtest.Config{})
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	w.WriteField("payload_json", `{"content":"three charts"}`)
	for i := range 3 {
		fw, _ := w.CreateFormFile(fmt.Sprintf("files[%d]", i), fmt.Sprintf("c%d.png", i))
		fw.Write(bytes.Repeat([]byte{1}, 9<<20))
	}
	w.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v9/channels/c1/messages", &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Authorization", "Bot "+srv.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out bytes.Buffer
	out.ReadFrom(resp.Body)
	if resp.StatusCode != 413 || !strings.Contains(out.String(), `"code":40005`) {
		t.Errorf("27 MiB request = %d %s, want 413 with code 40005", resp.StatusCode, out.String())
	}
	if n := len(srv.SentMessages("c1")); n != 0 {
		t.Errorf("%d messages created, want none", n)
	}
}

// TestSendSplitsFilesUnderTheRequestCap: three 9 MB charts (27 MB, over Discord's 25 MiB a
// request) all arrive, spread over requests that each stay under the cap (#33 point 1).
func TestSendSplitsFilesUnderTheRequestCap(t *testing.T) {
	srv := discordtest.New(t, discordtest.Config{})
	b := newBot(t, srv)
	_, ms := charts(t, 3, 9_000_000)
	ids, err := b.Send(context.Background(), messages.Outbound{ChatID: "c1", Text: "the charts", Media: ms,
		SessionKey: "agent:main:discord:direct:7", OutboxSeq: 4})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := received(srv, "c1")
	if len(got) != 3 || got["chart1.png"] != 9_000_000 || got["chart3.png"] != 9_000_000 {
		t.Errorf("files arrived: %v, want the three charts of 9,000,000 bytes", got)
	}
	if sent := srv.SentMessages("c1"); len(ids) != len(sent) || len(sent) != 3 {
		t.Errorf("%d ids for %d messages, want the text and two messages of files", len(ids), len(sent))
	}
}

// TestFileTooLargeGetsANote: a file Discord refuses with 413 is refused for good: the user
// gets a note naming it, the other files and the reply still go, and Send does not fail (a
// failure would keep the reply at the head of the chat's queue for a day).
func TestFileTooLargeGetsANote(t *testing.T) {
	srv := discordtest.New(t, discordtest.Config{})
	b := newBot(t, srv)
	_, ms := charts(t, 1, 1000)
	srv.FailAfter(discordtest.RouteSend, 1, http.StatusRequestEntityTooLarge) // the text passes, the file is refused
	_, err := b.Send(context.Background(), messages.Outbound{ChatID: "c1", Text: "the chart", Media: ms})
	if err != nil {
		t.Fatalf("Send: %v, want the refusal as a note", err)
	}
	sent := srv.Sent("c1")
	if len(sent) != 2 || sent[0] != "the chart" || !strings.Contains(sent[1], "chart1.png not sent") || !strings.Contains(sent[1], "too large") {
		t.Errorf("sent %q, want the text, then a note that chart1.png was too large", sent)
	}
}

// TestRetryDoesNotRepostText: a reply whose files failed (5xx) is sent again later, after
// Discord forgot its nonces; its text chunks, already delivered, are not posted again.
func TestRetryDoesNotRepostText(t *testing.T) {
	srv := discordtest.New(t, discordtest.Config{})
	b := newBot(t, srv)
	_, ms := charts(t, 1, 1000)
	out := messages.Outbound{ChatID: "c1", Text: strings.Repeat("long answer. ", 200), Media: ms,
		SessionKey: "agent:main:discord:direct:7", OutboxSeq: 9}
	srv.FailAfter(discordtest.RouteSend, 2, http.StatusInternalServerError) // two text chunks, then the file fails
	if _, err := b.Send(context.Background(), out); err == nil {
		t.Fatal("Send with a 500 on the file succeeded")
	}
	srv.ExpireNonces() // the retry comes after Discord's nonce window
	ids, err := b.Send(context.Background(), out)
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	sent := srv.SentMessages("c1")
	if len(sent) != 3 {
		var texts []string
		for _, m := range sent {
			texts = append(texts, fmt.Sprintf("%.20q+%d files", m.Content, len(srv.Files(m.ID))))
		}
		t.Fatalf("channel shows %d messages %v, want the two text chunks once and the file", len(sent), texts)
	}
	if len(ids) != 3 || ids[0] != sent[0].ID || ids[2] != sent[2].ID {
		t.Errorf("retry returned ids %v, want those of all three messages", ids)
	}
}

// TestFakeNoncesAreTimeLimited: the fake, like Discord, answers a send with a nonce it saw
// lately with the message made then, and creates a new message once its window passed.
func TestFakeNoncesAreTimeLimited(t *testing.T) {
	srv := discordtest.New(t, discordtest.Config{})
	b := newBot(t, srv)
	out := messages.Outbound{ChatID: "c1", Text: "once", SessionKey: "k", OutboxSeq: 1}
	// Two bots (two processes: a restart) send the same outbox row.
	if _, err := b.Send(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	if _, err := newBot(t, srv).Send(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Sent("c1")); n != 1 {
		t.Fatalf("%d messages within the nonce window, want 1", n)
	}
	srv.ExpireNonces()
	if _, err := newBot(t, srv).Send(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Sent("c1")); n != 2 {
		t.Errorf("%d messages after the nonce window, want 2 (Discord no longer knows the nonce)", n)
	}
}

// TestBatchTooLargeIsSentFileByFile: when Discord refuses a message of several files as too
// large, each file is sent alone, and only one it refuses alone gets a note.
func TestBatchTooLargeIsSentFileByFile(t *testing.T) {
	srv := discordtest.New(t, discordtest.Config{})
	b := newBot(t, srv)
	_, ms := charts(t, 3, 1000)
	srv.FailNext(discordtest.RouteSend, http.StatusRequestEntityTooLarge, 0)  // the batch of three
	srv.FailAfter(discordtest.RouteSend, 1, http.StatusRequestEntityTooLarge) // then the second alone
	if _, err := b.Send(context.Background(), messages.Outbound{ChatID: "c1", Media: ms}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := received(srv, "c1")
	if len(got) != 2 || got["chart1.png"] != 1000 || got["chart3.png"] != 1000 {
		t.Errorf("files arrived: %v, want chart1.png and chart3.png", got)
	}
	if !slices.ContainsFunc(srv.Sent("c1"), func(s string) bool { return strings.Contains(s, "chart2.png not sent") }) {
		t.Errorf("sent %q, want a note on chart2.png", srv.Sent("c1"))
	}
}
