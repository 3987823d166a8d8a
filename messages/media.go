package messages

// MediaKind is what sort of file a Media is.
type MediaKind string

const (
	MediaImage    MediaKind = "image"
	MediaVoice    MediaKind = "voice" // a voice note recorded in the app
	MediaAudio    MediaKind = "audio" // an audio file
	MediaVideo    MediaKind = "video" // a video or a round video note
	MediaDocument MediaKind = "document"
)

// Media is a file that came with an Inbound or goes out with an Outbound.
//
// Inbound: the channel fills Kind, Name, MIME, Size (as announced, 0 when unknown) and Ref
// (the platform's handle to download it); reef sets Via and, once the file is saved in the
// agent's workspace before the run, Path; Note says why it was not saved (over the size cap,
// the download failed), Text holds what reef read from it (a transcript, a text document).
//
// Outbound: Root is the directory the file is confined to (the agent's workspace) and Path
// is relative to it; a channel opens it with os.OpenInRoot, never by joining the two.
type Media struct {
	Kind MediaKind `json:"kind"`
	Name string    `json:"name,omitempty"`
	MIME string    `json:"mime,omitempty"`
	Size int64     `json:"size,omitempty"`
	Ref  string    `json:"ref,omitempty"`
	Via  string    `json:"via,omitempty"` // the channel account (channels.ID) that can download Ref
	Root string    `json:"root,omitempty"`
	Path string    `json:"path,omitempty"`
	Note string    `json:"note,omitempty"`
	Text string    `json:"text,omitempty"`
	// Data is an image's bytes, filled for one model request only (never stored).
	Data []byte `json:"-"`
}

// Pending reports whether an inbound Media still waits for its download.
func (m Media) Pending() bool { return m.Ref != "" && m.Path == "" && m.Note == "" }
