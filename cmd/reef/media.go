package main

import (
	"fmt"
	"io"
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
	s.Guest = media.Quota{Files: configs.MediaLimit(m.GuestFilesPerHour, configs.DefaultGuestFilesPerHour),
		Bytes: mb(configs.MediaLimit(m.GuestMBPerHour, configs.DefaultGuestMBPerHour))}
	s.Owner = media.Quota{Files: configs.MediaLimit(m.OwnerFilesPerHour, configs.DefaultOwnerFilesPerHour),
		Bytes: mb(configs.MediaLimit(m.OwnerMBPerHour, configs.DefaultOwnerMBPerHour))}
	s.MaxInbox = mb(configs.MediaLimit(m.MaxInboxMB, configs.DefaultMaxInboxMB))
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

// printMedia is reef status's line on the limits of the files people send: per sender and
// hour, and each workspace's inbox against media.maxInboxMB.
func printMedia(w io.Writer, cfg *configs.Config) {
	s := mediaSettings(cfg)
	quota := func(q media.Quota) string {
		if q.Files == 0 && q.Bytes == 0 {
			return "no limit"
		}
		return fmt.Sprintf("%s files, %s", limitText(int64(q.Files), ""), limitText(q.Bytes>>20, " MB"))
	}
	fmt.Fprintf(w, "files people send, per sender and hour: guests %s; the owner %s\n", quota(s.Guest), quota(s.Owner))
	for _, ac := range cfg.Agents {
		n, err := media.InboxSize(ac.Workspace)
		if err != nil {
			continue
		}
		fmt.Fprintf(w, "inbox of agent %s: %s of %s (media.maxInboxMB; the oldest files are removed past it)\n",
			ac.ID, media.Bytes(n), limitText(s.MaxInbox>>20, " MB"))
	}
}

func limitText(n int64, unit string) string {
	if n <= 0 {
		return "no limit"
	}
	return fmt.Sprintf("%d%s", n, unit)
}
