package discordtest

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
)

// MaxUpload is the largest file a bot may attach (Discord's default for servers without
// boosts: 10 MiB); a bigger one gets 413.
const MaxUpload = 10 << 20

// MaxRequest is the largest Create Message request Discord takes, files and payload_json
// together: 25 MiB. A bigger one gets 413 with code 40005, "Request entity too large".
const MaxRequest = 25 << 20

// AddFile stores data as the content of an attachment and returns the Attachments entry
// ("name|content/type") to put in a Message: its url is this server's /attachments/...,
// like Discord's CDN, served without a token.
func (s *Server) AddFile(name, contentType string, data []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.files == nil {
		s.files = map[string][]byte{}
	}
	s.files[name] = data
	return name + "|" + contentType
}

// Downloads returns how many attachments were downloaded from the fake CDN.
func (s *Server) Downloads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.downloads
}

// Files returns the files the bot attached to message id, by name.
func (s *Server) Files(messageID string) map[string][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.uploads[messageID]
}

// serveAttachment answers GET /attachments/{channel}/{name} from the files AddFile stored.
func (s *Server) serveAttachment(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	data, ok := s.files[r.PathValue("name")]
	if ok {
		s.downloads++
	}
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	_, _ = w.Write(data)
}

// attachmentURL is the url of an attachment in the wire format.
func (s *Server) attachmentURL(channelID, name string) string {
	return s.URL + "/attachments/" + channelID + "/" + name
}

// readSend decodes a message send: JSON, or multipart/form-data with payload_json and the
// files as files[n] (Discord's attachments upload).
func readSend(r *http.Request, v any) (files map[string][]byte, status int, msg string) {
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		if err := json.NewDecoder(r.Body).Decode(v); err != nil {
			return nil, 400, "The request body contains invalid JSON."
		}
		return nil, 0, ""
	}
	if r.ContentLength > MaxRequest {
		return nil, http.StatusRequestEntityTooLarge, "Request entity too large"
	}
	body := &countingReader{r: r.Body}
	mr := multipart.NewReader(body, params["boundary"])
	files = map[string][]byte{}
	for {
		p, err := mr.NextPart()
		if body.n > MaxRequest { // a chunked body: counted as it arrives
			return nil, http.StatusRequestEntityTooLarge, "Request entity too large"
		}
		if err == io.EOF {
			return files, 0, ""
		}
		if err != nil {
			return nil, 400, "Invalid Form Body"
		}
		var buf bytes.Buffer
		n, err := io.Copy(&buf, io.LimitReader(p, MaxUpload+1))
		if err != nil {
			return nil, 400, "Invalid Form Body"
		}
		switch name := p.FormName(); {
		case name == "payload_json":
			if json.Unmarshal(buf.Bytes(), v) != nil {
				return nil, 400, "The request body contains invalid JSON."
			}
		case strings.HasPrefix(name, "files["):
			if n > MaxUpload {
				return nil, http.StatusRequestEntityTooLarge, "Request entity too large"
			}
			files[p.FileName()] = buf.Bytes()
		}
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
