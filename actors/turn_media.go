package actors

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/internal/media"
	"github.com/reefgw/reef/messages"
)

// MediaSettings say how the files of inbound messages are fetched (package media).
type MediaSettings struct {
	Limits      media.Limits
	Transcriber media.Transcriber // nil: voice and audio are saved, not transcribed
	// Owner and Guest bound the files one sender sends per hour (connector_media.go); the zero
	// value is no limit. MaxInbox bounds the inbox folder: past it the oldest files are removed
	// (0: no bound).
	Owner, Guest media.Quota
	MaxInbox     int64
}

// mediaFetched brings back the run's user entries with their files saved and described.
type mediaFetched struct{ user []messages.ChatMessage }

// pendingMedia reports whether an entry of user has a file still to download.
func pendingMedia(user []messages.ChatMessage) bool {
	for _, m := range user {
		for _, md := range m.Media {
			if md.Pending() {
				return true
			}
		}
	}
	return false
}

// fetchMedia downloads the files of the run's messages into the workspace before its first
// model call, in a goroutine the Turn owns (its runCtx); the result comes back as
// mediaFetched. The messages are in the inbox already: a crash before the run is recorded
// fetches them again. It reports false when there is nothing to fetch.
func (t *Turn) fetchMedia(ctx actor.Context) bool {
	if !pendingMedia(t.in.user) {
		return false
	}
	user, deps, log := t.in.user, t.in.deps, t.log
	f := &media.Fetcher{Workspace: t.in.agent.Workspace, Limits: deps.media().Limits,
		Transcriber: deps.media().Transcriber, Log: log}
	runCtx, self, root := t.runCtx, ctx.Self(), ctx.ActorSystem().Root
	go func() {
		defer func() {
			if r := recover(); r != nil {
				log.Error().Str("panic", fmt.Sprint(r)).Str("stack", string(debug.Stack())).Msg("media fetch panicked")
				root.Send(self, &mediaFetched{user: failMedia(user, "not downloaded: reef failed to fetch it")})
			}
		}()
		root.Send(self, &mediaFetched{user: fetchEntries(runCtx, f, deps, user)})
	}()
	return true
}

// fetchEntries fetches the pending files of each entry through the channel account that
// received it and appends what the model is told about them to the entry's content.
func fetchEntries(ctx context.Context, f *media.Fetcher, deps *Deps, user []messages.ChatMessage) []messages.ChatMessage {
	out := append([]messages.ChatMessage(nil), user...)
	for i, m := range out {
		if !pendingMedia([]messages.ChatMessage{m}) {
			continue
		}
		var open media.Open
		fc := *f
		if len(m.Media) > 0 {
			via := m.Media[0].Via
			if fe, ok := deps.channel(via).(channels.Fetcher); ok {
				open = func(ctx context.Context, md messages.Media) (io.ReadCloser, error) {
					body, err := fe.Fetch(ctx, md)
					if errors.Is(err, channels.ErrPermanent) { // not worth trying again
						err = fmt.Errorf("%w: %w", media.ErrUnavailable, err)
					}
					return body, err
				}
			}
			if fl, ok := deps.channel(via).(channels.FetchLimiter); ok {
				name, _ := channels.SplitID(via)
				fc.PlatformMax, fc.Platform = fl.MaxFetch(), platformName(name)
			}
		}
		m.Media = fc.Fetch(ctx, m.Time, m.Media, open)
		pruneInbox(f, deps, m.Media)
		if desc := media.Describe(m.Media); desc != "" {
			m.Content = strings.TrimRight(m.Content, "\n") + "\n\n" + deps.redactor().apply(desc)
		}
		out[i] = m
	}
	return out
}

// failMedia marks every pending file with note.
func failMedia(user []messages.ChatMessage, note string) []messages.ChatMessage {
	out := append([]messages.ChatMessage(nil), user...)
	for i := range out {
		if !pendingMedia(out[i : i+1]) {
			continue
		}
		ms := append([]messages.Media(nil), out[i].Media...)
		for j := range ms {
			if ms[j].Pending() {
				ms[j].Note = note
			}
		}
		out[i].Media = ms
		out[i].Content = strings.TrimRight(out[i].Content, "\n") + "\n\n" + media.Describe(ms)
	}
	return out
}

// onMediaFetched takes in the entries with their files and goes on with the run.
func (t *Turn) onMediaFetched(ctx actor.Context, msg *mediaFetched) {
	if t.done {
		return
	}
	t.in.user, t.userChanged = msg.user, true
	ctx.Send(ctx.Parent(), &uploadsFetched{seq: t.in.seq, paths: uploadsOf(msg.user)})
	t.begin(ctx)
}

// mediaEntries gives the model the images of the request when its model takes image input.
func mediaEntries(in *turnInput, msgs []messages.ChatMessage) []messages.ChatMessage {
	if !in.model.Vision {
		return msgs
	}
	return media.LoadImages(in.agent.Workspace, msgs)
}

// platformName is how a note names a channel's platform.
func platformName(channel string) string {
	switch channel {
	case "telegram":
		return "Telegram"
	case "discord":
		return "Discord"
	case "feishu":
		return "Feishu"
	}
	return channel
}
