package discord_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels/discord"
	"github.com/reefgw/reef/channels/discord/discordtest"
	"github.com/reefgw/reef/internal/netguard"
	"github.com/reefgw/reef/messages"
)

// guarded is a bot whose media client is the SSRF guard, opened for 127.0.0.1 only when
// allowLoopback (as tools.web.allowPrivate would).
func guarded(t *testing.T, srv *discordtest.Server, allowLoopback bool) *discord.Bot {
	t.Helper()
	var allow []string
	if allowLoopback {
		allow = []string{"127.0.0.1"}
	}
	g, err := netguard.New(netguard.Config{AllowPrivate: allow})
	if err != nil {
		t.Fatal(err)
	}
	b, err := discord.New(discord.Config{Token: srv.Token(), APIBase: srv.URL, MediaClient: g.Client(10*time.Second, 3)}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAttachmentsDownloadThroughTheGuard: an attachment arrives as Media with its CDN url;
// Fetch downloads it through the media client, and a guard that does not open loopback
// refuses the same url.
func TestAttachmentsDownloadThroughTheGuard(t *testing.T) {
	srv := discordtest.New(t, discordtest.Config{})
	r := run(t, srv)
	photo := bytes.Repeat([]byte{0x89, 'P', 'N', 'G'}, 300)
	srv.Say(t, discordtest.Message{ChannelID: "dm1", AuthorID: "7", Content: "what is this?",
		Attachments: []string{srv.AddFile("cat.png", "image/png", photo)}})
	in := r.next(t)
	if in.Text != "what is this?" || len(in.Media) != 1 {
		t.Fatalf("inbound %q with %d files", in.Text, len(in.Media))
	}
	m := in.Media[0]
	if m.Kind != messages.MediaImage || m.Size != int64(len(photo)) || !strings.HasPrefix(m.Ref, srv.URL+"/attachments/") {
		t.Errorf("media = %+v", m)
	}
	body, err := guarded(t, srv, true).Fetch(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(body)
	body.Close()
	if !bytes.Equal(data, photo) {
		t.Errorf("downloaded %d bytes, want %d", len(data), len(photo))
	}
	if _, err := guarded(t, srv, false).Fetch(context.Background(), m); !errors.Is(err, netguard.ErrBlocked) {
		t.Errorf("Fetch of a loopback url through the default guard = %v, want ErrBlocked", err)
	}
	if _, err := newBot(t, srv).Fetch(context.Background(), m); err == nil {
		t.Error("Fetch without a media client succeeded")
	}
	if srv.Downloads() != 1 {
		t.Errorf("%d downloads, want 1", srv.Downloads())
	}
}

// TestSendAttachesFiles: a reply's files go as attachments (multipart payload_json and
// files[n]) after the text; one outside the workspace is refused with a note, not uploaded.
func TestSendAttachesFiles(t *testing.T) {
	srv := discordtest.New(t, discordtest.Config{})
	b := newBot(t, srv)
	ws := t.TempDir()
	chart := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{3}, 400)...)
	os.WriteFile(filepath.Join(ws, "chart.png"), chart, 0o644)
	ids, err := b.Send(context.Background(), messages.Outbound{ChatID: "c9", Text: "the chart", Media: []messages.Media{
		{Root: ws, Path: "chart.png"}, {Root: ws, Path: "../etc/passwd"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 2 {
		t.Fatalf("ids %v, want the text and one message with the files", ids)
	}
	files := srv.Files(ids[1])
	if len(files) != 1 || !bytes.Equal(files["chart.png"], chart) {
		t.Errorf("attached %d files, want chart.png with its bytes", len(files))
	}
	sent := srv.Sent("c9")
	if len(sent) != 2 || sent[0] != "the chart" || !strings.Contains(sent[1], "passwd not sent") {
		t.Errorf("sent %q, want the text, then the files with a note on the refused one", sent)
	}
}
