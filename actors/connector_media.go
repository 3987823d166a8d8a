package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/internal/media"
	"github.com/reefgw/reef/messages"
)

// Files people send are bounded per sender and hour (MediaSettings.Owner, Guest: count and
// bytes as the platform announces them) before anything is stored or downloaded, and in
// total (MediaSettings.MaxInbox: the oldest files of the inbox are removed), so one guest
// cannot fill the disk.

// mediaNotice is what a sender over the limit is told, once per hour.
const mediaNotice = "You've sent more files than I can take this hour; I'm not keeping the ones over the limit. " +
	"Please wait before sending more."

// meterMedia counts in's files against its sender's hourly limit. Over it, the files are
// dropped from the message: a message without text then is only marked seen (not stored or
// answered, as over the rate limit), one with text keeps its text with a note. The sender is
// told once. It reports whether in is still to be stored.
func (c *Connector) meterMedia(root *actor.RootContext, self *actor.PID, m *media.Meter, in *messages.Inbound) bool {
	q := c.deps.media().Guest
	if c.deps.rules(c.name).IsOwner(in) {
		q = c.deps.media().Owner
	}
	var bytes int64
	for _, md := range in.Media {
		bytes += md.Size
	}
	ok, notify := m.Take(rateKey(in), q, len(in.Media), bytes, c.deps.now())
	if ok {
		return true
	}
	if notify {
		c.log.Warn().Str("sender", in.SenderID).Str("chat", in.ChatID).Int("files", len(in.Media)).
			Msg("sender is over the hourly file limit (media.guestFilesPerHour...); dropping their files (logged once an hour)")
		root.Send(self, &messages.Outbound{Channel: c.channel, Account: c.account, ChatID: in.ChatID,
			ThreadID: in.ThreadID, ReplyToID: in.MessageID, Text: mediaNotice})
	}
	n := len(in.Media)
	in.Media = nil
	if in.Text == "" {
		return false
	}
	in.Text += fmt.Sprintf("\n[reef: %d file(s) sent with this message were not kept: the sender is over the hourly file limit]", n)
	return true
}

// pruneInbox removes the oldest files of the inbox past MediaSettings.MaxInbox, keeping the
// files just saved.
func pruneInbox(f *media.Fetcher, deps *Deps, saved []messages.Media) {
	if deps.media().MaxInbox <= 0 {
		return
	}
	keep := make([]string, 0, len(saved))
	for _, m := range saved {
		keep = append(keep, m.Path)
	}
	if n, err := media.PruneInbox(f.Workspace, deps.media().MaxInbox, keep); err != nil {
		f.Log.Warn().Err(err).Msg("pruning the inbox")
	} else if n > 0 {
		f.Log.Info().Int("removed", n).Int64("maxBytes", deps.media().MaxInbox).Msg("inbox over media.maxInboxMB: oldest files removed")
	}
}
