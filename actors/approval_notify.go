package actors

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/sessionkey"
)

// connectorPID is the PID of the Connector of channel under the Gateway gw (named so by
// Gateway.onStarted): Approvals finds it by name, so it needs no list that a restart would lose.
func connectorPID(gw *actor.PID, channel string) *actor.PID {
	return actor.NewPID(gw.Address, gw.Id+"/connector-"+channel)
}

// terminalChat is the terminal's chat id (channels/terminal.ChatID); the terminal prints
// whatever chat a reply names.
const terminalChat = "local"

// store writes a new request (put) and, in the same transaction, finds the owner's chat to ask
// in; without put it only finds the chat, to ask again for a request stored before a restart.
func (a *Approvals) store(ctx actor.Context, w *approvalWait, put bool) {
	req, deps := w.req, a.deps
	connected := map[string]bool{}
	for name := range deps.live().Channels {
		connected[name] = true
	}
	self, root := ctx.Self(), ctx.ActorSystem().Root
	var target *messages.Outbound
	var reached string
	ctx.Send(a.storage, &storeWrite{
		Apply: func(tx persistence.Tx) error {
			var err error
			if target, reached, err = ownerChat(tx, deps, req, connected); err != nil || !put {
				return err
			}
			return access.PutExecRequest(tx, req)
		},
		Done: func(err error) {
			root.Send(self, &approvalStored{again: !put, id: req.ID, target: target, reached: reached, err: err})
		},
	})
}

// onStored asks the owner and tells the waiter where, once the request is durable.
func (a *Approvals) onStored(ctx actor.Context, msg *approvalStored) {
	w := a.waits[msg.id]
	if w == nil {
		return
	}
	if msg.err != nil && msg.again {
		msg.target = nil // the request is stored: it still waits, the owner is just not asked again
	} else if msg.err != nil {
		delete(a.waits, msg.id)
		a.log.Error().Err(msg.err).Str("approval", msg.id).Msg("could not store an approval request; the command is not run")
		if w.waiter != nil {
			ctx.Send(w.waiter, &approvalDecided{d: access.ExecDecision{ExecRequest: w.req, Decision: access.DecisionDenied,
				By: "reef (storage error)", At: a.deps.now()}})
		}
		return
	}
	if !msg.again {
		w.stored = true
		a.arm(ctx, w)
	}
	if msg.target != nil {
		out := *msg.target
		out.Text, out.Direct, out.Choices = requestText(w.req, a.deps.now()), true, requestChoices(w.req)
		if msg.again && a.deps.Cluster != nil {
			out.Text += "\n(Asked again: its conversation moved to another reef node, or reef restarted, while it waited.)"
		} else if msg.again {
			out.Text += "\n(Asked again: reef restarted while it waited.)"
		}
		ctx.Send(connectorPID(ctx.Parent(), out.Channel), &out)
	} else {
		a.log.Warn().Str("approval", w.req.ID).Msg("no owner chat to ask in: decide with `reef security approvals`")
	}
	a.log.Info().Str("approval", w.req.ID).Str("command", w.req.Command).Str("cwd", orWorkspace(w.req.Workdir)).
		Str("asker", w.req.Asker()).Str("asked", msg.reached).Msg("exec approval requested")
	if w.waiter != nil {
		ctx.Send(w.waiter, &approvalPending{req: w.req, reached: msg.reached})
	}
}

// ownerChat finds where to ask the owner about req: the terminal when the run is there; else
// the direct chat of an owner (a sender allowFrom names) on the run's channel, else on another
// channel, found from the stored sessions (never under dmScope main, whose one DM session may
// last have been a guest's chat); else the terminal when it runs. nil: nowhere, only the CLI.
func ownerChat(r persistence.Reader, deps *Deps, req access.ExecRequest, connected map[string]bool) (*messages.Outbound, string, error) {
	if req.Channel == "terminal" {
		return &messages.Outbound{Channel: "terminal", ChatID: req.ChatID}, "the terminal", nil
	}
	live := deps.live()
	names := make([]string, 0, len(live.Access))
	for name := range live.Access {
		if connected[name] && name != req.Channel {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	if connected[req.Channel] {
		names = slices.Insert(names, 0, req.Channel)
	}
	scope := live.Session.withDefaults().DMScope
	for _, name := range names {
		rules := live.Access[name]
		if rules == nil || scope == "main" {
			continue
		}
		for _, owner := range rules.AllowFrom {
			if owner == "*" {
				continue
			}
			for _, ag := range live.Agents {
				in := messages.Inbound{Channel: name, ChatType: messages.ChatDirect, SenderID: owner}
				info, ok, err := r.Session(sessionkey.For(ag.ID, scope, &in))
				if err != nil {
					return nil, "", err
				}
				if ok && info.Channel == name && info.ChatID != "" {
					return &messages.Outbound{Channel: name, Account: info.Account, ChatID: info.ChatID},
						"the owner's direct chat on " + name, nil
				}
			}
		}
	}
	if connected["terminal"] {
		return &messages.Outbound{Channel: "terminal", ChatID: terminalChat}, "the terminal", nil
	}
	return nil, "", nil
}

// requestText is what the owner reads.
func requestText(req access.ExecRequest, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Approval needed [%s]: %s wants to run\n%s\nin %s.\n", req.ID, req.Asker(), displayCommand(req.Command), orWorkspace(req.Workdir))
	fmt.Fprintf(&b, "/approve %s — run it once\n", req.ID)
	if req.Prefix != "" {
		fmt.Fprintf(&b, "/approve %s always — run it, and from now on every command starting %s, without asking\n", req.ID, displayCommand(req.Prefix))
	} else {
		b.WriteString("(it holds shell operators, so it can only be approved once)\n")
	}
	fmt.Fprintf(&b, "/deny %s — refuse it\n", req.ID)
	fmt.Fprintf(&b, "Without an answer within %s it is denied.", req.Deadline.Sub(now).Round(time.Second))
	return b.String()
}

// requestChoices are the answers of requestText, for platforms with buttons.
func requestChoices(req access.ExecRequest) []messages.Choice {
	out := []messages.Choice{{Label: "Approve once", Text: "/approve " + req.ID}}
	if req.Prefix != "" {
		out = append(out, messages.Choice{Label: "Always approve", Text: "/approve " + req.ID + " always"})
	}
	return append(out, messages.Choice{Label: "Deny", Text: "/deny " + req.ID})
}

// waitingText is the status line in the asking chat.
func waitingText(req access.ExecRequest, reached string) string {
	text := fmt.Sprintf("Waiting for the owner to approve %s (request %s", displayCommand(req.Command), req.ID)
	if reached == "" {
		return text + "). No owner chat was found to ask in: the owner can decide with `reef security approvals approve " + req.ID + "`."
	}
	return text + ", asked in " + reached + ")."
}

// decisionText answers the owner's /approve or /deny.
func decisionText(d access.ExecDecision, waiting bool) string {
	var text string
	switch d.Decision {
	case access.DecisionDenied:
		return fmt.Sprintf("Denied %s: %s will not run.", d.ID, displayCommand(d.Command))
	case access.DecisionAlways:
		text = fmt.Sprintf("Approved %s: %s runs now, and commands starting %s will run without asking "+
			"(/approvals lists them; /approvals revoke %s takes it back).", d.ID, displayCommand(d.Command), displayCommand(d.Prefix), d.Prefix)
	default:
		text = fmt.Sprintf("Approved %s: %s runs now.", d.ID, displayCommand(d.Command))
	}
	if !waiting {
		text += " (The run that asked is not running right now; it runs the command if it resumes after the restart.)"
	}
	return text
}

// deniedResult is the error result the model gets for a command that did not run.
func deniedResult(d access.ExecDecision, timeout time.Duration) string {
	switch d.Decision {
	case access.DecisionTimeout:
		return fmt.Sprintf("not run: the owner did not approve this command within %s, so it counts as denied", timeout)
	case access.DecisionWithdrawn:
		return "interrupted: reef restarted while this command waited for the owner's approval, and the request ended; it did not run"
	case access.DecisionDenied:
		if strings.HasPrefix(d.By, "reef") {
			return "not run: reef could not save the approval request (storage error)"
		}
	}
	return "not run: the owner denied this command"
}

// onList answers /approvals: from what this Approvals holds, or, in cluster mode, where
// other nodes' requests and prefixes are too, from the store (approvals_cluster.go).
func (a *Approvals) onList(ctx actor.Context, msg *approvalList) {
	if a.deps.Cluster != nil {
		a.readList(ctx, msg)
		return
	}
	var reqs []access.ExecRequest
	for _, w := range a.waits {
		if w.stored {
			reqs = append(reqs, w.req)
		}
	}
	ctx.Send(msg.replyTo, &approvalAnswer{in: msg.in, text: listText(reqs, a.prefixes, a.deps.now())})
}

// listText is /approvals: what waits, and the prefixes allowed always.
func listText(reqs []access.ExecRequest, prefixes []access.ExecPrefix, now time.Time) string {
	var b strings.Builder
	slices.SortFunc(reqs, func(x, y access.ExecRequest) int { return x.Created.Compare(y.Created) })
	if len(reqs) == 0 {
		b.WriteString("No command waits for approval.")
	} else {
		b.WriteString("Waiting for approval (/approve <id> [always], /deny <id>):")
		for _, req := range reqs {
			fmt.Fprintf(&b, "\n%s  %s: %s in %s, %s left", req.ID, req.Asker(), displayCommand(req.Command),
				orWorkspace(req.Workdir), max(req.Deadline.Sub(now), 0).Round(time.Second))
		}
	}
	if len(prefixes) == 0 {
		b.WriteString("\nNo command prefix is allowed always.")
		return b.String()
	}
	b.WriteString("\nAllowed always (revoke with /approvals revoke <prefix>):")
	for _, p := range prefixes {
		fmt.Fprintf(&b, "\n%s  by %s, %s", displayCommand(p.Prefix), p.By, p.Added.Format("2006-01-02 15:04"))
	}
	return b.String()
}

func orWorkspace(dir string) string {
	if dir == "" || dir == "." {
		return "the workspace"
	}
	return "the workspace's " + dir
}

// displayCommand shows a command to the owner as inline code that it cannot break out of. A
// plain command is shown as it is; one holding a backtick, a line break, a control or format
// character (a bidi override, a zero-width space) is shown on one line with those escaped
// (\n, \x60, \u202e; a backslash as \\), and says so: a command cannot draw text of its own,
// such as a fake "Approval needed" block, into the request, on any platform's Markdown.
func displayCommand(cmd string) string {
	cmd = strings.ToValidUTF8(cmd, "\uFFFD")
	if !strings.ContainsFunc(cmd, needsEscape) {
		return "`" + cmd + "`"
	}
	var b strings.Builder
	b.WriteByte('`')
	for _, r := range cmd {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '`':
			b.WriteString(`\x60`)
		case needsEscape(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString("` (shown escaped: it holds line breaks, backticks or invisible characters)")
	return b.String()
}

func needsEscape(r rune) bool {
	return r == '`' || unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

func normalizePrefix(p string) string { return strings.Join(strings.Fields(p), " ") }
