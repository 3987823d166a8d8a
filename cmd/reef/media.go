package main

import (
	"net/http"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/internal/media"
	"github.com/reefgw/reef/internal/netguard"
	"github.com/reefgw/reef/providers"
)

// mediaSettings maps the media block: download caps and the transcription endpoint.
func mediaSettings(cfg *configs.Config) actors.MediaSettings {
	m := cfg.Media
	mb := func(n int) int64 { return int64(n) << 20 }
	s := actors.MediaSettings{Limits: media.Limits{Image: mb(m.MaxMB.Image), Audio: mb(m.MaxMB.Audio),
		Video: mb(m.MaxMB.Video), Document: mb(m.MaxMB.Document), InlineChars: m.InlineChars}}
	s.Transcriber = transcriber(cfg)
	return s
}

// transcriber builds the client media.transcription names (newTranscriber), or nil when it
// is off.
func transcriber(cfg *configs.Config) media.Transcriber {
	t := cfg.Media.Transcription
	typ := cfg.TranscriptionType()
	if typ == "" {
		return nil
	}
	retry := providers.RetryConfig{MaxRetries: cfg.LLM.MaxRetries,
		MaxRetryAfter: time.Duration(cfg.LLM.MaxRetryAfterSeconds) * time.Second}
	return newTranscriber(t.Provider, typ, cfg.Providers[t.Provider], t.Model, int64(cfg.Media.MaxMB.Audio)<<20, retry)
}

// mediaClient fetches URLs on the agent's behalf for channels (a reply's MEDIA: https://...,
// Discord's attachment URLs): behind the SSRF guard of tools.web.
func mediaClient(cfg *configs.Config) *http.Client {
	guard, err := netguard.New(netguard.Config{AllowPrivate: cfg.Tools.Web.AllowPrivate})
	if err != nil { // Validate refuses such entries first; should one slip by, open nothing
		guard, _ = netguard.New(netguard.Config{})
	}
	return guard.Client(2*time.Minute, 5)
}
