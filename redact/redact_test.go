package redact

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	const key = "sk-live-0123456789abcdefXYZ" // 27 characters
	const tok = "123456:AAbbCCdd/+ee="        // has characters that base64 and URL encoding change
	std := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	urlb := func(s string) string { return base64.URLEncoding.EncodeToString([]byte(s)) }
	r := New(key, tok, "x", "short7!")
	tests := []struct {
		name, in string
	}{
		{"exact", "OPENAI_API_KEY=" + key},
		{"twice", key + " and " + key},
		{"split by a space", "key: sk-live-01234 56789abcdefXYZ"},
		{"split by a newline", "key: sk-live-0123456789\nabcdefXYZ"},
		{"prefix", "the key starts with " + key[:12] + "..."},
		{"longer prefix", "starts " + key[:20] + " then"},
		{"hex", "dump " + hex.EncodeToString([]byte(key))},
		{"HEX", "dump " + strings.ToUpper(hex.EncodeToString([]byte(key)))},
		{"base64 offset 0", "Authorization: Bearer " + std(key)},
		{"base64 offset 1", "Basic " + std("u:"+key)},
		{"base64 offset 2", "Basic " + std("us:"+key)},
		{"base64 offset 3", "Basic " + std("use:"+key)},
		{"url-safe base64", "t=" + urlb("a"+tok)},
		{"url-safe base64 offset 2", "t=" + urlb("ab"+tok+"zz")},
		{"std base64 token", std("ab" + tok + "\n")},
		{"url-encoded", "https://x.test/?token=" + url.QueryEscape(tok)},
		{"path-encoded", "https://x.test/" + url.PathEscape(tok)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.String(tt.in)
			if !strings.Contains(got, Mark) {
				t.Fatalf("String(%q) = %q, want a %s mark", tt.in, got, Mark)
			}
			for _, leak := range []string{key, tok, key[:12], hex.EncodeToString([]byte(key)), "56789abcdefXYZ"} {
				if strings.Contains(got, leak) {
					t.Errorf("String(%q) = %q, still holds %q", tt.in, got, leak)
				}
			}
		})
	}
}

// TestStringKeepsText: short values, a prefix shorter than PrefixLen and ordinary text pass
// through unchanged.
func TestStringKeepsText(t *testing.T) {
	r := New("x", "none", "short7!", "sk-live-0123456789abcdefXYZ", "abcdefgh")
	for _, in := range []string{
		"exit status 1: x marks the spot, none of it is secret, short7! is short",
		"sk-live-012 is eleven characters of the key, under PrefixLen",
		"abcdefg and bcdefgh are not the 8-char secret",
		"",
		"日本語のテキスト",
	} {
		if got := r.String(in); got != in {
			t.Errorf("String(%q) = %q, want it unchanged", in, got)
		}
	}
	if got := r.String("a abcdefgh b"); got != "a "+Mark+" b" {
		t.Errorf("8-char secret: got %q", got)
	}
}

func TestNilAndShort(t *testing.T) {
	if r := New("x", "1234567"); r != nil {
		t.Errorf("New of values under %d characters = %v, want nil", MinLen, r)
	}
	var r *Redactor
	if got := r.String("x y"); got != "x y" {
		t.Errorf("nil redactor changed text: %q", got)
	}
}

func FuzzString(f *testing.F) {
	const key = "sk-live-0123456789abcdefXYZ"
	r := New(key)
	f.Add("pre " + key + " post")
	f.Add("sk-live-01234 56789")
	f.Fuzz(func(t *testing.T, s string) {
		got := r.String(s)
		if strings.Contains(got, key) {
			t.Errorf("String(%q) = %q holds the key", s, got)
		}
	})
}
