package feishutest

import (
	"bytes"
	"encoding/json"
	"image"
	_ "image/gif" // imageSizeOK reads the sizes of these formats
	_ "image/jpeg"
	_ "image/png"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Upload limits of the platform: images 10 MB, files 30 MB.
const (
	MaxImageUpload = 10 << 20
	MaxFileUpload  = 30 << 20
)

// Codes of the upload rules.
const (
	CodeImageTooBig = 234006 // image over 10 MB
	CodeFileTooBig  = 234037 // file over 30 MB
	CodeEmptyFile   = 234010 // a file of 0 bytes ("File's size can't be 0.")
	CodeImageSize   = 234011 // an image over its resolution limit, which the fake checks
)

// Resolution limits of image uploads: a GIF at most 2000×2000, other images 12000×12000
// (bigger ones must be uploaded as files).
const (
	MaxGIFSide   = 2000
	MaxImageSide = 12000
)

// upload is a file a person sent or the bot uploaded.
type upload struct {
	name string
	data []byte
}

// UserSendsImage queues a direct image message whose image the bot can download, and
// returns its message id.
func (s *Server) UserSendsImage(chatID, openID string, data []byte) string {
	key := s.addUpload("img_", "", data)
	content, _ := json.Marshal(map[string]string{"image_key": key})
	_, id := s.Push(Message{ChatID: chatID, SenderID: openID, Type: "image", Content: string(content)})
	return id
}

// UserSendsFile queues a direct file message named name.
func (s *Server) UserSendsFile(chatID, openID, name string, data []byte) string {
	key := s.addUpload("file_", name, data)
	content, _ := json.Marshal(map[string]string{"file_key": key, "file_name": name})
	_, id := s.Push(Message{ChatID: chatID, SenderID: openID, Type: "file", Content: string(content)})
	return id
}

// UserSendsAudio queues a direct voice message (opus).
func (s *Server) UserSendsAudio(chatID, openID string, data []byte) string {
	key := s.addUpload("file_", "", data)
	content, _ := json.Marshal(map[string]any{"file_key": key, "duration": 2000})
	_, id := s.Push(Message{ChatID: chatID, SenderID: openID, Type: "audio", Content: string(content)})
	return id
}

// UserSendsPost queues a direct rich-text (post) message as the platform delivers it: a
// paragraph holding text, then one paragraph per image, an img element with the image_key
// (and its width and height) the bot can download from this message.
func (s *Server) UserSendsPost(chatID, openID, title, text string, images ...[]byte) string {
	paras := [][]map[string]any{{{"tag": "text", "text": text, "style": []string{}}}}
	for _, img := range images {
		key := s.addUpload("img_v3_", "", img)
		paras = append(paras, []map[string]any{{"tag": "img", "image_key": key, "width": 800, "height": 600}})
	}
	content, _ := json.Marshal(map[string]any{"title": title, "content": paras})
	_, id := s.Push(Message{ChatID: chatID, SenderID: openID, Type: "post", Content: string(content)})
	return id
}

// Downloads returns how many message resources were downloaded.
func (s *Server) Downloads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.downloads
}

func (s *Server) addUpload(prefix, name string, data []byte) string {
	key := s.nextID(prefix)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.uploads == nil {
		s.uploads = map[string]upload{}
	}
	s.uploads[key] = upload{name: name, data: data}
	return key
}

// handleResource answers GET /open-apis/im/v1/messages/{id}/resources/{key}?type=image|file
// with the file's bytes, for a key that the message's content holds (as the platform does:
// a key from another message is refused).
func (s *Server) handleResource(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	id, key := r.PathValue("id"), r.PathValue("key")
	_, known := s.msgChat[id]
	known = known && strings.Contains(s.bodies[id].content, `"`+key+`"`)
	u, ok := s.uploads[key]
	if ok && known {
		s.downloads++
	}
	s.mu.Unlock()
	switch typ := r.URL.Query().Get("type"); {
	case typ != "image" && typ != "file":
		apiError(w, http.StatusBadRequest, 234001, "invalid request param: type")
	case !ok || !known:
		apiError(w, http.StatusBadRequest, 234003, "file not in message")
	default:
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.Itoa(len(u.data)))
		_, _ = w.Write(u.data)
	}
}

// handleImageUpload answers POST /open-apis/im/v1/images (multipart: image_type, image).
func (s *Server) handleImageUpload(w http.ResponseWriter, r *http.Request) {
	s.handleUpload(w, r, "image", "img_", MaxImageUpload, CodeImageTooBig, "image_key")
}

// handleFileUpload answers POST /open-apis/im/v1/files (multipart: file_type, file_name, file).
func (s *Server) handleFileUpload(w http.ResponseWriter, r *http.Request) {
	s.handleUpload(w, r, "file", "file_", MaxFileUpload, CodeFileTooBig, "file_key")
}

func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request, field, prefix string, limit, tooBig int, keyName string) {
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		apiError(w, http.StatusBadRequest, 234001, "invalid multipart form")
		return
	}
	f, hdr, err := r.FormFile(field)
	if err != nil {
		apiError(w, http.StatusBadRequest, 234001, "invalid request param: "+field)
		return
	}
	defer f.Close()
	data, _ := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if len(data) > limit {
		apiError(w, http.StatusBadRequest, tooBig, "file size exceeds the limit")
		return
	}
	if len(data) == 0 { // what a retried upload of a consumed stream sends
		apiError(w, http.StatusBadRequest, CodeEmptyFile, "File's size can't be 0.")
		return
	}
	if field == "image" && !imageSizeOK(data) {
		apiError(w, http.StatusBadRequest, CodeImageSize, "image resolution exceeds the limit")
		return
	}
	if field == "image" && r.FormValue("image_type") != "message" || field == "file" && r.FormValue("file_type") == "" {
		apiError(w, http.StatusBadRequest, 234001, "invalid request param: type")
		return
	}
	name := r.FormValue("file_name")
	if name == "" {
		name = hdr.Filename
	}
	key := s.addUpload(prefix, name, data)
	writeJSON(w, http.StatusOK, map[string]any{"code": 0, "msg": "success", "data": map[string]string{keyName: key}})
}

// attach fills a sent image or file message's File and FileName from its upload; s.mu held.
// It reports false when the key is unknown (the platform refuses such a message).
func (s *Server) attach(m *SentMessage) bool {
	var c struct {
		ImageKey string `json:"image_key"`
		FileKey  string `json:"file_key"`
	}
	_ = json.Unmarshal([]byte(m.Content), &c)
	u, ok := s.uploads[c.ImageKey+c.FileKey]
	m.File, m.FileName = u.data, u.name
	return ok
}

// imageSizeOK applies the upload's resolution limits. An image the fake cannot decode passes
// (tests send stand-in bytes).
func imageSizeOK(data []byte) bool {
	c, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return true
	}
	side := MaxImageSide
	if format == "gif" {
		side = MaxGIFSide
	}
	return c.Width <= side && c.Height <= side
}
