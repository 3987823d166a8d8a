package doccheck

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLinks(t *testing.T) {
	tests := []struct {
		name string
		md   string
		want []Link
	}{
		{"inline", "see [the docs](docs/a.md) and [b](b.md#part)", []Link{{1, "docs/a.md"}, {1, "b.md#part"}}},
		{"image and title", "![logo](img/logo.png \"Logo\")", []Link{{1, "img/logo.png"}}},
		{"angle brackets", "[x](<docs/a b.md>)", []Link{{1, "docs/a b.md"}}},
		{"parentheses in target", "[x](a_(b).md)", []Link{{1, "a_(b).md"}}},
		{"code in link text", "[`reef chat`](docs/commands.md#reef-chat)", []Link{{1, "docs/commands.md#reef-chat"}}},
		{"reference definition", "[docs]: docs/index.md", []Link{{1, "docs/index.md"}}},
		{"external", "[go](https://go.dev)", []Link{{1, "https://go.dev"}}},
		{"line numbers", "a\n\n[x](x.md)", []Link{{3, "x.md"}}},
		{"code span skipped", "run `[x](nowhere.md)` here", nil},
		{"double backtick span skipped", "``a ` [x](nowhere.md)`` [y](y.md)", []Link{{1, "y.md"}}},
		{"fenced block skipped", "```sh\n[x](nowhere.md)\n```\n[y](y.md)", []Link{{4, "y.md"}}},
		{"tilde fence skipped", "~~~\n[x](nowhere.md)\n~~~", nil},
		{"unclosed backtick is text", "a ` b [y](y.md)", []Link{{1, "y.md"}}},
		{"not a link", "f(x) and [a] (b.md)", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Links(tt.md)); diff != "" {
				t.Errorf("Links(%q) (-want +got):\n%s", tt.md, diff)
			}
		})
	}
}

func TestLinkParts(t *testing.T) {
	l := Link{Target: "docs/a.md?plain=1#some-part"}
	if l.Path() != "docs/a.md" || l.Fragment() != "some-part" || l.External() {
		t.Errorf("%+v: path %q, fragment %q, external %v", l, l.Path(), l.Fragment(), l.External())
	}
	for _, target := range []string{"https://x.org/a.md", "mailto:a@b.c", "//cdn.example/x"} {
		if !(Link{Target: target}).External() {
			t.Errorf("%q is not external", target)
		}
	}
}

func TestSlug(t *testing.T) {
	tests := []struct{ heading, want string }{
		{"Set up", "set-up"},
		{"Who may talk to your bot", "who-may-talk-to-your-bot"},
		{"Feishu / Lark", "feishu--lark"},
		{"`reef chat`", "reef-chat"},
		{"Limits and safety!", "limits-and-safety"},
		{"**Bold** and [a link](x.md)", "bold-and-a-link"},
		{"snake_case and kebab-case", "snake_case-and-kebab-case"},
		{"4. Persistence (bbolt)", "4-persistence-bbolt"},
		{"Messages sent while the agent works: queue modes", "messages-sent-while-the-agent-works-queue-modes"},
		{"Café 飞书", "café-飞书"},
	}
	for _, tt := range tests {
		if got := Slug(tt.heading); got != tt.want {
			t.Errorf("Slug(%q) = %q, want %q", tt.heading, got, tt.want)
		}
	}
}

func TestAnchors(t *testing.T) {
	md := "# Title\n\n## Part\n\ntext # not a heading\n\n## Part\n\n```\n## In code\n```\n" +
		"### Closed ###\n<a id=\"custom\"></a>\n#NoSpace\n"
	want := map[string]bool{"title": true, "part": true, "part-1": true, "closed": true, "custom": true}
	if diff := cmp.Diff(want, Anchors(md)); diff != "" {
		t.Errorf("Anchors (-want +got):\n%s", diff)
	}
}

// TestCheckFindsBrokenLinks is the test of the test: a missing file, a missing heading and a
// link out of the repository are each reported; good links are not.
func TestCheckFindsBrokenLinks(t *testing.T) {
	root := t.TempDir()
	write := func(name, body string) {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "# Reef\n\n"+
		"[ok](docs/a.md) [ok](docs/a.md#who-may-talk) [ok](#reef) [ok](cmd/x.go) [ok](docs/)\n"+
		"[ok](https://example.com/missing.md) [ok](</docs/a.md#who-may-talk>)\n"+
		"[broken](docs/gone.md)\n"+
		"[broken](docs/a.md#no-such-heading)\n"+
		"[broken](#nothing)\n"+
		"[broken](../outside.md)\n")
	write("docs/a.md", "# A\n\n## Who may talk?\n\n[ok](../README.md#reef) [broken](b.md)\n")
	write("cmd/x.go", "package main\n")

	got, err := Check(root, []string{"README.md", "docs/a.md"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`README.md:5: link "docs/gone.md": docs/gone.md does not exist`,
		`README.md:6: link "docs/a.md#no-such-heading": docs/a.md has no heading with anchor #no-such-heading`,
		`README.md:7: link "#nothing": README.md has no heading with anchor #nothing`,
		`README.md:8: link "../outside.md": points outside the repository`,
		`docs/a.md:5: link "b.md": docs/b.md does not exist`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Check (-want +got):\n%s", diff)
	}
}
