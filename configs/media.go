package configs

import "strings"

// MediaConfig says how reef handles files people send and files agents send back
// (docs/media.md).
type MediaConfig struct {
	// MaxMB caps a download per kind of file; over it the agent gets a note with the file's
	// name and size instead. Defaults: image 10, audio 25 (voice notes too), video 50, document 20.
	MaxMB MediaCaps `yaml:"maxMB"`
	// InlineChars is how much of a text-like document (txt, md, csv, json, code) goes into
	// the message; default 20000.
	InlineChars int `yaml:"inlineChars"`
	// Transcription turns voice notes and audio into text; off unless set.
	Transcription TranscriptionConfig `yaml:"transcription"`
	// Files one sender may send per hour, by count and by size in MB (as the platform
	// announces it): over it they are not kept and the sender is told once. 0 takes the
	// default, -1 is no limit. Defaults: guests 20 files and 100 MB, the owner 200 and 2000.
	GuestFilesPerHour int `yaml:"guestFilesPerHour"`
	GuestMBPerHour    int `yaml:"guestMBPerHour"`
	OwnerFilesPerHour int `yaml:"ownerFilesPerHour"`
	OwnerMBPerHour    int `yaml:"ownerMBPerHour"`
	// MaxInboxMB bounds the inbox folder of each workspace (the files people sent); past it
	// the oldest files are removed. 0 takes the default 2048, -1 is no bound.
	MaxInboxMB int `yaml:"maxInboxMB"`
}

// Defaults of the media limits.
const (
	DefaultGuestFilesPerHour = 20
	DefaultGuestMBPerHour    = 100
	DefaultOwnerFilesPerHour = 200
	DefaultOwnerMBPerHour    = 2000
	DefaultMaxInboxMB        = 2048
)

// MediaLimit is a media limit's value in effect: n, its default for 0, and 0 (none) for -1.
func MediaLimit(n, def int) int {
	switch {
	case n == 0:
		return def
	case n < 0:
		return 0
	}
	return n
}

// MediaCaps are sizes in MB per kind of file; 0 takes the default.
type MediaCaps struct {
	Image    int `yaml:"image"`
	Audio    int `yaml:"audio"`
	Video    int `yaml:"video"`
	Document int `yaml:"document"`
}

// TranscriptionConfig names the service that transcribes: a configured provider (its baseUrl
// and apiKey) and the model. A provider of type openai is called at /audio/transcriptions
// (OpenAI, Groq, a local whisper server); one of type gemini at generateContent with the
// audio inline and an instruction to transcribe it.
type TranscriptionConfig struct {
	Provider string `yaml:"provider"` // a key of providers, of type openai or gemini
	Model    string `yaml:"model"`    // e.g. whisper-1, gpt-4o-mini-transcribe, gemini-2.5-flash
}

// TranscriptionType is the type of the provider media.transcription names (openai or
// gemini), or "" when transcription is off.
func (c *Config) TranscriptionType() string {
	t := c.Media.Transcription
	if t.Provider == "" || t.Model == "" {
		return ""
	}
	return providerType(t.Provider, c.Providers[t.Provider])
}

// visionPrefixes are the model name prefixes known to take image input; the longest match
// wins, and models.<ref>.vision overrides it.
var visionPrefixes = map[string]bool{
	"gpt-4o": true, "gpt-4.1": true, "gpt-5": true, "o3": true, "o4": true, "claude": true,
	"claude-2": false, "claude-instant": false, "gemini": true, "gpt-3.5": false, "gpt-4o-audio": false,
	"qwen-vl": true, "qwen2.5-vl": true, "llava": true, "pixtral": true, "llama-4": true,
}

// SeesImages reports whether the model ref takes image input: models.<ref>.vision, else the
// table of known models.
func (c *Config) SeesImages(ref string) bool {
	if v := c.Models[ref].Vision; v != nil {
		return *v
	}
	_, name, _ := SplitModel(ref)
	return seesImages(name)
}

// seesImages is the default of ModelConfig.Vision for a model name.
func seesImages(name string) bool {
	best, sees := 0, false
	for prefix, v := range visionPrefixes {
		if strings.HasPrefix(name, prefix) && len(prefix) > best {
			best, sees = len(prefix), v
		}
	}
	return sees
}

func (v *validator) media(m MediaConfig, providers map[string]ProviderConfig) {
	v.nonNegative("media.maxMB.image", m.MaxMB.Image)
	v.nonNegative("media.maxMB.audio", m.MaxMB.Audio)
	v.nonNegative("media.maxMB.video", m.MaxMB.Video)
	v.nonNegative("media.maxMB.document", m.MaxMB.Document)
	v.nonNegative("media.inlineChars", m.InlineChars)
	for key, n := range map[string]int{"guestFilesPerHour": m.GuestFilesPerHour, "guestMBPerHour": m.GuestMBPerHour,
		"ownerFilesPerHour": m.OwnerFilesPerHour, "ownerMBPerHour": m.OwnerMBPerHour, "maxInboxMB": m.MaxInboxMB} {
		if n < -1 {
			v.addf("media.%s: %d is not a limit; use a number of 1 or more, 0 for the default or -1 for none", key, n)
		}
	}
	t := m.Transcription
	if t.Provider == "" && t.Model == "" {
		return
	}
	p, ok := providers[t.Provider]
	switch typ := providerType(t.Provider, p); {
	case t.Provider == "":
		v.addf("media.transcription.provider: name the provider (a key of providers, of type openai or gemini) that transcribes")
	case !ok:
		v.addf("media.transcription.provider: %q is not a configured provider", t.Provider)
	case typ != "openai" && typ != "gemini":
		v.addf("media.transcription.provider: %q is of type %s: reef transcribes with an OpenAI-compatible /audio/transcriptions (type openai) or Gemini (type gemini)", t.Provider, typ)
	}
	if t.Model == "" {
		v.addf("media.transcription.model: name the transcription model, e.g. whisper-1 or gemini-2.5-flash")
	}
}
