package actors

import (
	"fmt"
	"strings"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/schedule"
)

// jobEvent builds the system event a job raises: the target session and where the reply goes.
func (t *Timer) jobEvent(j *schedule.Job, now time.Time) (messages.Inbound, error) {
	in := messages.Inbound{System: true, Source: "cron:" + j.ID, Time: now, ChatType: messages.ChatDirect}
	// A job has the standing of whoever created it: the operator's (the CLI's, a job without a
	// session) is the owner's and runs in the owner's main session; the cron tool's has the
	// standing of the session it was created in, a guest's when a grant gave a guest the tool.
	origin := j.SessionKey
	var info persistence.SessionInfo
	if origin == "" {
		origin = t.mainSession(j.AgentID)
		in.Standing = messages.OwnerStanding()
	} else {
		info = t.sessionInfo(origin)
		in.Standing = sessionStanding(info)
	}
	in.SessionKey = origin
	if j.SessionTarget == "isolated" || j.Payload.Kind == "agentTurn" {
		in.SessionKey = fmt.Sprintf("agent:%s:cron:%s", j.AgentID, j.ID)
	}
	if in.SessionKey == "" {
		return in, fmt.Errorf("timer: job %s: agent %s has no conversation to run in yet", j.ID, j.AgentID)
	}
	switch j.Delivery.Mode {
	case "channel":
		in.Channel, in.ChatID = j.Delivery.Channel, j.Delivery.To
	case "announce":
		if j.SessionKey == "" {
			info = t.sessionInfo(origin)
		}
		in.Channel, in.Account, in.ChatID, in.ThreadID = info.Channel, info.Account, info.ChatID, info.ThreadID
	}
	in.Text = eventText(j, now)
	return in, nil
}

// sessionStanding is the standing of an event reef raises in (or from) the session of info:
// the owner's when the owner used it (SessionInfo.OwnerSeen), a guest's otherwise.
func sessionStanding(info persistence.SessionInfo) *messages.Standing {
	if info.OwnerSeen.IsZero() {
		return messages.GuestStanding()
	}
	return messages.OwnerStanding()
}

// eventText is what the model reads when a job fires.
func eventText(j *schedule.Job, now time.Time) string {
	loc, err := j.Schedule.Location()
	if err != nil {
		loc = time.UTC
	}
	name := j.Name
	if name == "" {
		name = j.ID
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[Scheduled reminder] Your cron job %q (id %s, %s) fired. It says:\n", name, j.ID, j.Schedule.Describe())
	for line := range strings.Lines(j.Text()) {
		b.WriteString("> " + strings.TrimRight(line, "\n") + "\n")
	}
	b.WriteString("Handle it yourself now, as it says. This is not a message from the user: do not relay or " +
		"repeat the reminder to them unless it asks you to tell them something.\n")
	fmt.Fprintf(&b, "Current time: %s (%s), %s UTC.", now.In(loc).Format("Monday 2006-01-02 15:04 MST"),
		loc.String(), now.UTC().Format("2006-01-02 15:04"))
	return b.String()
}

func (t *Timer) sessionInfo(key string) persistence.SessionInfo {
	var info persistence.SessionInfo
	if key == "" {
		return info
	}
	if err := t.deps.Store.View(func(r persistence.Reader) error {
		var err error
		info, _, err = r.Session(key)
		return err
	}); err != nil {
		t.log.Error().Err(err).Str("session", key).Msg("timer: read session")
	}
	return info
}
