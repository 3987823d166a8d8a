package reqbody

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/reefgw/reef/messages"
)

// TestBodyReads: a body reads back whole however it is read: byte by byte across segment
// ends, in one Read (net/http copies a body of known length through a buffer, one write to
// the connection per Read, so one Read must fill it across segments), and through WriteTo.
func TestBodyReads(t *testing.T) {
	for _, b := range []Body{
		{[]byte(`{"a":"`), []byte("shared prefix"), []byte(`"}`)},
		{[]byte("one")},
		{[]byte("x"), {}, []byte("y"), {}},
		{},
	} {
		whole := bytes.Join(b, nil)
		if n := b.Len(); n != int64(len(whole)) {
			t.Errorf("%q: Len %d, joined %d", whole, n, len(whole))
		}
		read, err := io.ReadAll(iotest.OneByteReader(b.Reader()))
		if err != nil || !bytes.Equal(read, whole) {
			t.Errorf("read %q (%v), want %q", read, err, whole)
		}
		p := make([]byte, len(whole)+1)
		if n, err := b.Reader().Read(p); (err != nil && len(whole) > 0) || n != len(whole) || !bytes.Equal(p[:n], whole) {
			t.Errorf("%q: one Read gave %d bytes (%v)", whole, n, err)
		}
		var written bytes.Buffer
		if _, err := io.Copy(&written, b.Reader()); err != nil || !bytes.Equal(written.Bytes(), whole) {
			t.Errorf("written %q (%v), want %q", written.Bytes(), err, whole)
		}
		if err := iotest.TestReader(b.Reader(), whole); err != nil {
			t.Errorf("%q: %v", whole, err)
		}
	}
}

// TestSplice: insert goes right after the first occurrence of after, tools become the
// object's last member, and both stay segments of their own (shared, not copied).
func TestSplice(t *testing.T) {
	tools := []byte(`[{"name":"read"}]`)
	insert := []byte("PROMPT")
	for _, tc := range []struct {
		name          string
		encoded       string
		after         string
		insert, tools []byte
		want          string
		ok            bool
	}{
		{"both", `{"m":"x","s":"","u":"s:\"\""}`, `"s":"`, insert, tools, `{"m":"x","s":"PROMPT","u":"s:\"\"","tools":[{"name":"read"}]}`, true},
		{"prompt only", `{"s":"tail"}`, `"s":"`, insert, nil, `{"s":"PROMPTtail"}`, true},
		{"tools only", `{"m":"x"}`, "", nil, tools, `{"m":"x","tools":[{"name":"read"}]}`, true},
		{"neither", `{"m":"x"}`, "", nil, nil, `{"m":"x"}`, true},
		{"no marker", `{"m":"x"}`, `"s":"`, insert, tools, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var after []byte
			if tc.after != "" {
				after = []byte(tc.after)
			}
			encoded := append(make([]byte, 0, len(tc.encoded)+64), tc.encoded...)
			b, ok := Splice(encoded, after, tc.insert, tc.tools)
			if ok != tc.ok {
				t.Fatalf("ok = %v", ok)
			}
			if !ok {
				return
			}
			if got := string(bytes.Join(b, nil)); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if !json.Valid(bytes.Join(b, nil)) {
				t.Error("not JSON")
			}
			for _, shared := range [][]byte{tc.insert, tc.tools} {
				if len(shared) > 0 && !hasSegment(b, shared) {
					t.Errorf("%q is not a segment of its own: copied", shared)
				}
			}
		})
	}
}

func hasSegment(b Body, seg []byte) bool {
	for _, s := range b {
		if len(s) > 0 && &s[0] == &seg[0] && len(s) == len(seg) {
			return true
		}
	}
	return false
}

// TestPrefixesEscapeOnce: a prefix is escaped as json.Marshal would (quotes, HTML, line
// separators, invalid UTF-8) and its bytes are shared by later requests.
func TestPrefixesEscapeOnce(t *testing.T) {
	var pc Prefixes
	prefix := "You are Reef. <b>Bold</b> & \"quoted\"\nLine\u2028sep \xff end"
	a, err := pc.Escaped(prefix)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := json.Marshal(prefix)
	if want := q[1 : len(q)-1]; !bytes.Equal(a, want) {
		t.Errorf("escaped %s, want %s", a, want)
	}
	b, _ := pc.Escaped(strings.Clone(prefix))
	if &a[0] != &b[0] {
		t.Error("the same prefix escaped twice")
	}
	for i := range maxPrefixes + 1 { // bounded: an old prefix is dropped, not kept forever
		pc.Escaped(prefix + strings.Repeat("!", i+1))
	}
	if len(pc.m) > maxPrefixes {
		t.Errorf("%d prefixes kept", len(pc.m))
	}
}

// TestToolsEncodedOncePerSlice: the same specs slice is encoded once; another slice again;
// an error is returned and not kept.
func TestToolsEncodedOncePerSlice(t *testing.T) {
	var tc Tools
	calls := 0
	encode := func(specs []messages.ToolSpec) ([]byte, error) {
		calls++
		return json.Marshal(specs)
	}
	specs := []messages.ToolSpec{{Name: "read"}, {Name: "write"}}
	a, _ := tc.Encoded(specs, encode)
	b, _ := tc.Encoded(specs, encode)
	if calls != 1 || &a[0] != &b[0] {
		t.Errorf("encoded %d times for one slice", calls)
	}
	tc.Encoded(specs[:1], encode)
	if calls != 2 {
		t.Errorf("a shorter slice was not encoded again (%d calls)", calls)
	}
	boom := errors.New("boom")
	if _, err := tc.Encoded(append([]messages.ToolSpec(nil), specs...), func([]messages.ToolSpec) ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("err = %v", err)
	}
	if c, _ := tc.Encoded(specs[:1], encode); calls != 2 || c == nil {
		t.Errorf("the failed encoding replaced the cache (%d calls)", calls)
	}
}

// TestStableCut never cuts inside a rune and stays within the prompt.
func TestStableCut(t *testing.T) {
	s := "ab🐚cd"
	for _, tc := range []struct{ stable, want int }{{0, 0}, {-3, 0}, {2, 2}, {3, 6}, {5, 6}, {6, 6}, {99, len(s)}} {
		if got := StableCut(s, tc.stable); got != tc.want {
			t.Errorf("StableCut(%q, %d) = %d, want %d", s, tc.stable, got, tc.want)
		}
	}
}

// TestNewRequest: the request carries the body, its length and a GetBody that reads it
// whole again; a nil body makes a request without one.
func TestNewRequest(t *testing.T) {
	b := Body{[]byte(`{"a":"`), []byte("shared"), []byte(`"}`)}
	req, err := NewRequest(context.Background(), "POST", "http://127.0.0.1/x", b)
	if err != nil {
		t.Fatal(err)
	}
	if req.ContentLength != b.Len() {
		t.Errorf("ContentLength %d, want %d", req.ContentLength, b.Len())
	}
	for range 2 { // the body, then a copy from GetBody
		got, _ := io.ReadAll(req.Body)
		if string(got) != `{"a":"shared"}` {
			t.Errorf("body %q", got)
		}
		if req.Body, err = req.GetBody(); err != nil {
			t.Fatal(err)
		}
	}
	req, err = NewRequest(context.Background(), "GET", "http://127.0.0.1/x", nil)
	if err != nil || req.Body != nil || req.ContentLength != 0 {
		t.Errorf("GET: body %v, length %d, err %v", req.Body, req.ContentLength, err)
	}
}
