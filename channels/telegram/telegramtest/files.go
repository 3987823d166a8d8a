package telegramtest

import (
	"bytes"
	"encoding/json"
	"image"
	_ "image/gif" // photoDimensionsOK reads the sizes of these formats
	_ "image/jpeg"
	_ "image/png"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"github.com/mymmrac/telego"
)

// Upload limits of the Bot API, which the fake enforces: photos 10 MB, other files 50 MB.
const (
	MaxPhotoUpload = 10 << 20
	MaxFileUpload  = 50 << 20
)

// file is one file users sent, downloadable by getFile and /file/bot<token>/<path>.
type file struct {
	path string
	data []byte
	size int64 // as announced; len(data) unless a test announces a bigger file than it holds
}

// MaxDownload is the largest file a bot can download: getFile refuses bigger ones with "file
// is too big".
const MaxDownload = 20 << 20

// AddFile stores data as a file users sent and returns its file_id. Bots download it with
// getFile, then GET /file/bot<token>/<file_path>.
func (s *Server) AddFile(data []byte) string { return s.addFile(data, int64(len(data))) }

// addFile stores a file announced as size bytes.
func (s *Server) addFile(data []byte, size int64) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextFile++
	id := "file-" + strconv.Itoa(s.nextFile)
	s.files[id] = file{path: "documents/file_" + strconv.Itoa(s.nextFile), data: data, size: max(size, int64(len(data)))}
	return id
}

// UserSendsPhoto queues a photo with a caption from senderID in the private chat chatID, in
// two sizes as Telegram sends them (a thumbnail, then the full photo holding data).
func (s *Server) UserSendsPhoto(chatID, senderID int64, data []byte, caption string) int {
	m := s.Message(chatID, telego.ChatTypePrivate, senderID, "")
	m.Caption = caption
	m.Photo = []telego.PhotoSize{
		{FileID: s.AddFile(data[:min(len(data), 16)]), FileUniqueID: "thumb", Width: 90, Height: 90, FileSize: min(len(data), 16)},
		{FileID: s.AddFile(data), FileUniqueID: "full", Width: 1280, Height: 960, FileSize: len(data)},
	}
	return s.Queue(telego.Update{Message: m})
}

// UserSendsDocument queues a file named name. size is what the message announces (Telegram
// gives it), len(data) when 0: a test announces a 30 MB file without holding one.
func (s *Server) UserSendsDocument(chatID, senderID int64, name, mimeType string, data []byte, size int64) int {
	if size == 0 {
		size = int64(len(data))
	}
	m := s.Message(chatID, telego.ChatTypePrivate, senderID, "")
	m.Document = &telego.Document{FileID: s.addFile(data, size), FileUniqueID: "doc", FileName: name, MimeType: mimeType, FileSize: size}
	return s.Queue(telego.Update{Message: m})
}

// UserSendsVoice queues a voice note (audio/ogg).
func (s *Server) UserSendsVoice(chatID, senderID int64, data []byte) int {
	m := s.Message(chatID, telego.ChatTypePrivate, senderID, "")
	m.Voice = &telego.Voice{FileID: s.AddFile(data), FileUniqueID: "voice", Duration: 2, MimeType: "audio/ogg", FileSize: int64(len(data))}
	return s.Queue(telego.Update{Message: m})
}

// UserSendsVideo queues a video named name. size is what the message announces, len(data)
// when 0 (as for UserSendsDocument).
func (s *Server) UserSendsVideo(chatID, senderID int64, name string, data []byte, size int64) int {
	if size == 0 {
		size = int64(len(data))
	}
	m := s.Message(chatID, telego.ChatTypePrivate, senderID, "")
	m.Video = &telego.Video{FileID: s.addFile(data, size), FileUniqueID: "video", Width: 640, Height: 360, Duration: 3,
		FileName: name, MimeType: "video/mp4", FileSize: size}
	return s.Queue(telego.Update{Message: m})
}

// UserSendsVideoNote queues a round video note (Telegram gives it no name and no MIME type).
func (s *Server) UserSendsVideoNote(chatID, senderID int64, data []byte) int {
	m := s.Message(chatID, telego.ChatTypePrivate, senderID, "")
	m.VideoNote = &telego.VideoNote{FileID: s.AddFile(data), FileUniqueID: "note", Length: 240, Duration: 2, FileSize: len(data)}
	return s.Queue(telego.Update{Message: m})
}

// UserSendsAnimation queues a GIF as Telegram delivers it: a silent MP4 in animation, and the
// same file in document too, for clients that predate animations.
func (s *Server) UserSendsAnimation(chatID, senderID int64, name string, data []byte) int {
	m := s.Message(chatID, telego.ChatTypePrivate, senderID, "")
	id := s.AddFile(data)
	m.Animation = &telego.Animation{FileID: id, FileUniqueID: "anim", Width: 320, Height: 240, Duration: 1,
		FileName: name, MimeType: "video/mp4", FileSize: int64(len(data))}
	m.Document = &telego.Document{FileID: id, FileUniqueID: "anim", FileName: name, MimeType: "video/mp4", FileSize: int64(len(data))}
	return s.Queue(telego.Update{Message: m})
}

// Downloads returns how many files were downloaded through /file/bot<token>/.
func (s *Server) Downloads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.downloads
}

func (s *Server) getFile(w http.ResponseWriter, _ *http.Request, body []byte) {
	var p telego.GetFileParams
	if !decode(w, body, &p) {
		return
	}
	s.mu.Lock()
	f, ok := s.files[p.FileID]
	s.mu.Unlock()
	if !ok {
		writeErr(w, http.StatusBadRequest, "Bad Request: invalid file_id", 0)
		return
	}
	if f.size > MaxDownload {
		writeErr(w, http.StatusBadRequest, "Bad Request: file is too big", 0)
		return
	}
	writeOK(w, telego.File{FileID: p.FileID, FileUniqueID: p.FileID, FileSize: f.size, FilePath: f.path})
}

// serveFile answers GET /file/bot<token>/<file_path>.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, rest string) {
	token, path, ok := strings.Cut(rest, "/")
	if !ok || token != s.token || r.Method != http.MethodGet {
		http.Error(w, `{"ok":false,"error_code":404,"description":"Not Found"}`, http.StatusNotFound)
		return
	}
	s.mu.Lock()
	var data []byte
	found := false
	for _, f := range s.files {
		if f.path == path {
			data, found = f.data, true
		}
	}
	if found {
		s.downloads++
	}
	s.mu.Unlock()
	if !found {
		http.Error(w, `{"ok":false,"error_code":404,"description":"Not Found"}`, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	_, _ = w.Write(data)
}

// sendFile handles sendPhoto, sendDocument, sendVoice and sendVideo: multipart/form-data with
// chat_id, the file under field (photo, document, voice, video), optional caption and
// reply_parameters.
func (s *Server) sendFile(field string) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, r *http.Request, body []byte) {
		mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "multipart/form-data" {
			writeErr(w, http.StatusBadRequest, "Bad Request: there is no "+field+" in the request", 0)
			return
		}
		fields, name, data, err := readMultipart(body, params["boundary"], field)
		if err != nil || name == "" {
			writeErr(w, http.StatusBadRequest, "Bad Request: there is no "+field+" in the request", 0)
			return
		}
		if len(data) == 0 { // what a retried upload of a consumed stream sends
			writeErr(w, http.StatusBadRequest, "Bad Request: file must be non-empty", 0)
			return
		}
		limit := MaxFileUpload
		if field == "photo" {
			limit = MaxPhotoUpload
		}
		if len(data) > limit {
			writeErr(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large", 0)
			return
		}
		if field == "photo" && !photoDimensionsOK(data) {
			writeErr(w, http.StatusBadRequest, "Bad Request: PHOTO_INVALID_DIMENSIONS", 0)
			return
		}
		chat, ok := chatID(json.RawMessage(fields["chat_id"]))
		if !ok {
			writeErr(w, http.StatusBadRequest, "Bad Request: chat not found", 0)
			return
		}
		m := &SentMessage{ChatID: chat, Kind: field, FileName: name, File: data, Text: fields["caption"]}
		m.ThreadID, _ = strconv.Atoi(fields["message_thread_id"])
		if rp := fields["reply_parameters"]; rp != "" {
			var p telego.ReplyParameters
			_ = json.Unmarshal([]byte(rp), &p)
			m.ReplyTo = p.MessageID
		}
		s.mu.Lock()
		s.msgIDs[chat]++
		m.MessageID = s.msgIDs[chat]
		s.sent[chat] = append(s.sent[chat], m)
		msg := s.asMessage(m)
		onSend, sent := s.onSend, *m
		s.mu.Unlock()
		if onSend != nil {
			onSend(sent)
		}
		writeOK(w, msg)
	}
}

// readMultipart returns the form's text fields and the file under field.
func readMultipart(body []byte, boundary, field string) (fields map[string]string, name string, data []byte, err error) {
	fields = map[string]string{}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return fields, name, data, nil
		}
		if err != nil {
			return nil, "", nil, err
		}
		b, err := io.ReadAll(p)
		if err != nil {
			return nil, "", nil, err
		}
		if p.FormName() == field && p.FileName() != "" {
			name, data = p.FileName(), b
			continue
		}
		fields[p.FormName()] = string(b)
	}
}

// photoDimensionsOK applies sendPhoto's rules: width and height together at most 10000, and
// a ratio of at most 20. A photo the fake cannot decode passes (tests send stand-in bytes).
func photoDimensionsOK(data []byte) bool {
	c, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || c.Width <= 0 || c.Height <= 0 {
		return true
	}
	long, short := max(c.Width, c.Height), min(c.Width, c.Height)
	return c.Width+c.Height <= 10000 && long <= 20*short
}
