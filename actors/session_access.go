package actors

import (
	"path"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/sessionkey"
	"github.com/reefgw/reef/tools"
)

// isOwner reports whether in comes from the owner (access.Rules.IsOwner). A System event is
// the owner's only when its Standing says so (messages.Standing): a cron job, heartbeat or
// greeting of the owner's. A System event raised by a run counts as the owner's here, as it
// always has (its Standing records that run's tools, not who started it); its tools are
// bounded by that run's in toolPolicy, so this decides only whether exec asks for approval.
func (s *Session) isOwner(in messages.Inbound) bool {
	if in.System {
		return in.Standing != nil && (in.Standing.Caller == messages.CallerOwner || in.Standing.Raised())
	}
	return s.deps.rules(channels.ID(in.Channel, in.Account)).IsOwner(&in)
}

// toolPolicy is what a run answering ins may use: what every one of their senders may use
// (Deps.ToolGrants), so a message answered together with the owner's never borrows the
// owner's tools. A System event gets what its Standing allows, and a guest's tools without
// one: reef raising an event does not make it the owner's.
func (s *Session) toolPolicy(ins ...messages.Inbound) tools.Policy {
	p := s.agent.Policy
	for _, in := range ins {
		if in.System && in.Standing.Raised() { // raised by a run: at most that run's tools
			p = p.Intersect(standingPolicy(s.agent, in.Standing))
			continue
		}
		c := tools.Caller{Owner: s.isOwner(in), ChatID: in.ChatID, SenderID: in.SenderID,
			Group: in.ChatType == messages.ChatGroup || in.ChatType == messages.ChatThread}
		p = p.Intersect(s.deps.grants(channels.ID(in.Channel, in.Account)).Resolve(s.agent.Policy, c))
	}
	if sessionkey.IsStateless(s.key) { // deleted when its run ends: nothing may outlive it
		p = p.Without(outliveRun...)
	}
	return p
}

// outliveRun are the tools whose work goes on after the run that called them and reports back
// to its session: a stateless API request's session is gone by then.
var outliveRun = []string{"sessions_spawn", "sessions_send", "sessions_yield", "cron", "process"}

// private reports whether a run answering ins has the owner's standing, and so sees the
// owner's private files (tools.Reach, agent.PromptInput.Private): every person's message is
// the owner's, every System event the owner's (a Standing with CallerOwner, or raised by a run
// that had it), and none comes from a group, whose members all read the answer.
func (s *Session) private(ins []messages.Inbound) bool {
	for _, in := range ins {
		if in.ChatType == messages.ChatGroup || in.ChatType == messages.ChatThread {
			return false
		}
		switch {
		case !in.System:
			if !s.isOwner(in) {
				return false
			}
		case in.Standing == nil:
			return false
		case in.Standing.Caller == messages.CallerOwner, in.Standing.Raised() && in.Standing.Owner:
		default:
			return false
		}
	}
	return len(ins) > 0
}

// uploadsOf lists the files people sent in entries (their saved, workspace-relative paths):
// the only ones under inbox/ a guest's run may name (tools.Reach).
func uploadsOf(entries ...[]messages.ChatMessage) []string {
	var out []string
	for _, list := range entries {
		for _, m := range list {
			if m.Role != messages.RoleUser {
				continue
			}
			for _, md := range m.Media {
				if md.Path != "" && md.Root == "" {
					out = append(out, path.Clean(md.Path))
				}
			}
		}
	}
	return out
}

// uploadsFetched tells the Session the files its running Turn saved: a guest's run may send
// them back (the message tool's media, MEDIA: lines).
type uploadsFetched struct {
	seq   uint64
	paths []string
}

func (s *Session) onUploadsFetched(msg *uploadsFetched) {
	if s.turn != nil && msg.seq == s.turnSeq {
		s.turnReach.Uploads = append(s.turnReach.Uploads, msg.paths...)
	}
}

// confineMedia is the check every file a run sends passes (the message tool's media, MEDIA:
// lines), the same as read's (tools.OpenFile): inside the workspace, within the run's reach,
// a regular file with one link. URLs pass unchanged: they are fetched through the SSRF guard.
func (s *Session) confineMedia(m messages.Media) error {
	if m.Path == "" {
		return nil
	}
	f, _, _, err := tools.OpenFile(s.agent.Workspace, s.turnReach, m.Path)
	if err != nil {
		return err
	}
	return f.Close()
}

// ownerAnswered reports whether the run answering s.answering answers the owner: at least
// one person's message, and every person's message the owner's. It marks the session as the
// owner's (SessionInfo.OwnerSeen): cron jobs and heartbeats run there with the owner's tools,
// and the owner's direct chat that ran last is the agent's main session (heartbeat.go), so a
// guest's chat never gets them.
func (s *Session) ownerAnswered() bool {
	person := false
	for _, in := range s.answering {
		if in.System {
			continue
		}
		if !s.isOwner(in) {
			return false
		}
		person = true
	}
	return person
}
