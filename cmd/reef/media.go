package main

import (
	"net/http"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/internal/media"
	"github.com/reefgw/reef/internal/netguard"
)

// mediaSettings maps the media block: download caps and the transcription endpoint.
func mediaSettings(cfg *configs.Config) actors.MediaSettings {
	m := cfg.Media
	mb := func(n int) int64 { return int64(n) << 20 }
	s := actors.MediaSettings{Limits: media.Limits{Image: mb(m.MaxMB.Image), Audio: mb(m.MaxMB.Audio),
		Video: mb(m.MaxMB.Video), Document: mb(m.MaxMB.Document), InlineChars: m.InlineChars}}
	if t := m.Transcription; t.Provider != "" && t.Model != "" {
		p := cfg.Providers[t.Provider]
		base := p.BaseURL
		if base == "" {
			base = "https://api.openai.com/v1"
		}
		s.Transcriber = &media.OpenAITranscriber{BaseURL: base, APIKey: p.APIKey, Model: t.Model,
			Client: &http.Client{Timeout: 5 * time.Minute}}
	}
	return s
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
