package main

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/color/palette"
	"image/gif"
	"image/jpeg"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/encoding/simplifiedchinese"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/anthropic/anthropictest"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/gemini/geminitest"
)

// End-to-end tests of #33's provider points through the real binary: images the providers
// refuse as they are (a 4.5 MB photo to Anthropic, a GIF to Gemini) and a GBK page through
// web_fetch. Each arrives or is refused with a clear note, and the conversation goes on.

// imageReplies answers "image seen" when the request carries image data, else "text only".
func imageReplies(hasImage func(fake.Request) bool) func(fake.Request) fake.Reply {
	return func(r fake.Request) fake.Reply {
		if hasImage(r) {
			return fake.Reply{Text: "image seen"}
		}
		return fake.Reply{Text: "text only"}
	}
}

func TestE2EImagesFitTheProviders(t *testing.T) {
	photo := noisePhoto(4_500_000)
	cases := []struct {
		name, provider string
		serve          func(*fake.Script) (url string, close func())
		send           func(tg *telegramtest.Server, chat int64)
		hasImage       func(fake.Request) bool
		check          func(t *testing.T, r fake.Request)
	}{
		{
			name: "a 4.5 MB photo to Anthropic", provider: "type: anthropic\n    apiKey: sk-ant-e2e\nagents:\n  - id: main\n    model: llm/claude-sonnet-4-5\n",
			serve: func(s *fake.Script) (string, func()) { srv := anthropictest.NewServer(s); return srv.URL(), srv.Close },
			send:  func(tg *telegramtest.Server, chat int64) { tg.UserSendsPhoto(chat, chat, photo, "what is this?") },
			hasImage: func(r fake.Request) bool {
				return bytes.Contains(r.Body, []byte(`"type":"image"`))
			},
			check: func(t *testing.T, r fake.Request) {
				var b struct {
					Messages []struct {
						Content json.RawMessage `json:"content"`
					} `json:"messages"`
				}
				json.Unmarshal(r.Body, &b)
				for _, m := range b.Messages {
					var blocks []struct {
						Type   string                `json:"type"`
						Source struct{ Data string } `json:"source"`
					}
					json.Unmarshal(m.Content, &blocks)
					for _, bl := range blocks {
						if bl.Type == "image" && len(bl.Source.Data) > 5<<20 {
							t.Errorf("an image of %d bytes of base64 was sent, over Anthropic's 5 MB", len(bl.Source.Data))
						}
					}
				}
			},
		},
		{
			name: "a GIF to Gemini", provider: "type: gemini\n    apiKey: AIza-e2e-key\nagents:\n  - id: main\n    model: llm/gemini-2.5-flash\n",
			serve: func(s *fake.Script) (string, func()) { srv := geminitest.NewServer(s); return srv.URL(), srv.Close },
			send: func(tg *telegramtest.Server, chat int64) {
				tg.UserSendsDocument(chat, chat, "wave.gif", "image/gif", twoFrameGIF(), 0)
			},
			hasImage: func(r fake.Request) bool {
				for _, m := range r.Messages {
					for _, md := range m.Media {
						if md.Kind == messages.MediaImage {
							return true
						}
					}
				}
				return false
			},
			check: func(t *testing.T, r fake.Request) {
				for _, m := range r.Messages {
					for _, md := range m.Media {
						if md.MIME != "image/png" {
							t.Errorf("sent an image as %s, want image/png (Gemini takes no GIF)", md.MIME)
						}
					}
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			script := fake.NewScript()
			script.Respond = imageReplies(tc.hasImage)
			url, closeLLM := tc.serve(script)
			t.Cleanup(closeLLM)
			tg := telegramtest.NewWithToken(t, tgToken)
			yaml := "providers:\n  llm:\n    baseUrl: " + url + "\n    " + tc.provider + telegramYAML(tg.URL, "dmPolicy: open", `allowFrom: ["*"]`)
			_, e := writeConfig(t, newEchoLLM(t, 0, nil).srv, yaml)
			g := launchGateway(t, e)
			const chat = 4242
			tc.send(tg, chat)
			if !eventually(90*time.Second, func() bool { return slices.Contains(tg.Sent(chat), "image seen") }) {
				t.Fatalf("no reply that saw the image; sent %q\n%s", tg.Sent(chat), tail(g.stderr.String(), 3000))
			}
			tg.UserSays(chat, chat, "and now?")
			if !eventually(60*time.Second, func() bool { return len(tg.Sent(chat)) >= 2 }) {
				t.Fatalf("the conversation did not go on; sent %q\n%s", tg.Sent(chat), tail(g.stderr.String(), 3000))
			}
			reqs := script.Requests()
			for _, r := range reqs {
				tc.check(t, r)
			}
			if !tc.hasImage(reqs[len(reqs)-1]) {
				t.Error("the later turn did not send the image again")
			}
		})
	}
}

// TestE2EWebFetchGBK: web_fetch reads a GBK page (charset only in its <meta>) as Chinese text.
func TestE2EWebFetchGBK(t *testing.T) {
	page, _ := simplifiedchinese.GBK.NewEncoder().String(`<!DOCTYPE html><html><head>` +
		`<meta http-equiv="Content-Type" content="text/html; charset=gb2312" /><title>珊瑚礁保护区今日开放_新闻中心</title></head>` +
		`<body><div class="nav"><a href="/">首页</a></div><div id="artibody"><p>海洋保护区今日向游客开放。</p></div></body></html>`)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(page))
	}))
	t.Cleanup(site.Close)
	llm := newEchoLLM(t, 0, nil)
	script := llm.srv.Script()
	args, _ := json.Marshal(map[string]string{"url": site.URL + "/news/2026-12-06/reef.shtml"})
	script.Add(fake.Reply{ToolCalls: []messages.ToolCall{{ID: "call_1", Name: "web_fetch", Arguments: string(args)}}},
		fake.Reply{Text: "read the page"})
	tg := telegramtest.NewWithToken(t, tgToken)
	yaml := "tools:\n  web:\n    allowPrivate: [\"127.0.0.1/32\"]\n" + telegramYAML(tg.URL, "dmPolicy: open", `allowFrom: ["*", "77"]`)
	_, e := writeConfig(t, llm.srv, yaml)
	g := launchGateway(t, e)
	tg.UserSays(77, 77, "what does the news page say?")
	if !eventually(90*time.Second, func() bool { return slices.Contains(tg.Sent(77), "read the page") }) {
		t.Fatalf("no answer; sent %q\n%s", tg.Sent(77), tail(g.stderr.String(), 3000))
	}
	var result string
	for _, r := range script.Requests() {
		for _, m := range r.Messages {
			if m.Role == messages.RoleTool {
				result = m.Content
			}
		}
	}
	for _, want := range []string{"珊瑚礁保护区今日开放_新闻中心", "海洋保护区今日向游客开放。"} {
		if !strings.Contains(result, want) {
			t.Errorf("web_fetch's result lacks %q:\n%s", want, result)
		}
	}
}

// noisePhoto is a JPEG of noise (it compresses like a detailed photograph) of at least size
// bytes; quality 100 keeps its pixels few.
func noisePhoto(size int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	for side := 1000; ; side += 20 {
		img := image.NewRGBA(image.Rect(0, 0, side, side))
		for i := range img.Pix {
			img.Pix[i] = uint8(rng.Uint32())
		}
		var buf bytes.Buffer
		jpeg.Encode(&buf, img, &jpeg.Options{Quality: 100})
		if buf.Len() >= size {
			return buf.Bytes()
		}
	}
}

// twoFrameGIF is an animated GIF of two frames.
func twoFrameGIF() []byte {
	frame := func(c color.Color) *image.Paletted {
		img := image.NewPaletted(image.Rect(0, 0, 40, 30), palette.Plan9)
		for i := range img.Pix {
			img.Pix[i] = uint8(img.Palette.Index(c))
		}
		return img
	}
	var buf bytes.Buffer
	gif.EncodeAll(&buf, &gif.GIF{Image: []*image.Paletted{frame(color.RGBA{255, 0, 0, 255}), frame(color.RGBA{0, 0, 255, 255})}, Delay: []int{10, 10}})
	return buf.Bytes()
}
