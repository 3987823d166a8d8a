package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/internal/termtext"
	"github.com/reefgw/reef/persistence"
)

const approvalsUsage = `  reef security approvals [-config FILE] [-json]
      Exec approvals: the commands waiting for the owner, the recent decisions (who asked, the
      command, its folder, the decision, who decided and when) and the prefixes allowed always.
  reef security approvals approve <id> [always] | deny <id>
      Decide a waiting command (reef must be running: the run that asked waits in it).
  reef security approvals revoke <prefix>
      Stop allowing a prefix always: its commands ask again.`

// approvalsView is what `reef security approvals` shows.
type approvalsView struct {
	Pending   []access.ExecRequest  `json:"pending"`
	Decisions []access.ExecDecision `json:"decisions"` // newest first
	Prefixes  []access.ExecPrefix   `json:"prefixes"`
}

// recentDecisions is how many audit records the listing shows.
const recentDecisions = 50

func readApprovals(store persistence.Store) (approvalsView, error) {
	var v approvalsView
	err := store.View(func(r persistence.Reader) error {
		var err error
		if v.Pending, err = access.ExecRequests(r); err != nil {
			return err
		}
		if v.Decisions, err = access.ExecDecisions(r, recentDecisions); err != nil {
			return err
		}
		v.Prefixes, err = access.ExecPrefixes(r)
		return err
	})
	// JSON lists, never null
	v.Pending, v.Decisions, v.Prefixes = nonNil(v.Pending), nonNil(v.Decisions), nonNil(v.Prefixes)
	return v, err
}

// serveApprovals adds the approvals routes to the control socket.
func serveApprovals(mux *http.ServeMux, rt *running) {
	mux.HandleFunc("GET /approvals", func(w http.ResponseWriter, r *http.Request) {
		v, err := readApprovals(rt.store)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		json.NewEncoder(w).Encode(v)
	})
	mux.HandleFunc("POST /approvals/{action}", func(w http.ResponseWriter, r *http.Request) {
		var text string
		var err error
		switch r.PathValue("action") {
		case "decide":
			text, err = rt.DecideApproval(r.Context(), r.FormValue("id"), r.FormValue("decision"))
		case "revoke":
			text, err = rt.RevokeApprovalPrefix(r.Context(), r.FormValue("prefix"))
		default:
			err = errors.New("unknown action")
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprint(w, text)
	})
}

// runApprovals runs `reef security approvals ...` (args after "approvals").
func runApprovals(cfg *configs.Config, args []string, asJSON bool, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintf(stderr, "reef security approvals: %s\n", strings.TrimSpace(err.Error()))
		return 1
	}
	control := dialControl(cfg)
	switch {
	case len(args) == 0:
		v, err := listApprovals(cfg, control)
		if err != nil {
			return fail(err)
		}
		if asJSON {
			printJSON(stdout, v)
		} else {
			printApprovals(stdout, v, time.Now())
		}
		return 0
	case args[0] == "approve" && (len(args) == 2 || len(args) == 3 && args[2] == "always"), args[0] == "deny" && len(args) == 2:
		decision := access.DecisionDenied
		if args[0] == "approve" {
			decision = access.DecisionApproved
			if len(args) == 3 {
				decision = access.DecisionAlways
			}
		}
		if control == nil {
			return fail(errors.New("no reef gateway is running: a waiting command is decided while reef runs, since the run that asked waits in it (in reef chat, answer /approve <id> in its terminal)"))
		}
		text, err := control.approvals("decide", map[string][]string{"id": {args[1]}, "decision": {decision}})
		if err != nil {
			return fail(err)
		}
		fmt.Fprintln(stdout, termtext.Text(text))
		return 0
	case args[0] == "revoke" && len(args) > 1:
		prefix := strings.Join(args[1:], " ")
		if control != nil {
			text, err := control.approvals("revoke", map[string][]string{"prefix": {prefix}})
			if err != nil {
				return fail(err)
			}
			fmt.Fprintln(stdout, termtext.Text(text))
			return 0
		}
		store, err := openStore(cfg)
		if err != nil {
			return fail(err)
		}
		err = store.Update(func(tx persistence.Tx) error { return access.RevokeExecPrefix(tx, prefix) })
		store.Close()
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "Revoked: `%s` asks again from now on.\n", strings.Join(strings.Fields(prefix), " "))
		return 0
	}
	fmt.Fprintln(stderr, "usage:\n"+approvalsUsage)
	return 2
}

func listApprovals(cfg *configs.Config, control *controlClient) (approvalsView, error) {
	if control != nil {
		var v approvalsView
		resp, err := control.http.Get("http://reef/approvals")
		if err != nil {
			return v, err
		}
		defer resp.Body.Close()
		return v, json.NewDecoder(resp.Body).Decode(&v)
	}
	store, err := openStore(cfg)
	if err != nil {
		return approvalsView{}, err
	}
	defer store.Close()
	return readApprovals(store)
}

func (c *controlClient) approvals(action string, form map[string][]string) (string, error) {
	resp, err := c.http.PostForm("http://reef/approvals/"+action, form)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return "", errors.New(string(b))
	}
	return string(b), nil
}

func printApprovals(w io.Writer, v approvalsView, now time.Time) {
	if len(v.Pending) == 0 {
		fmt.Fprintln(w, "no command waits for approval")
	} else {
		fmt.Fprintln(w, "waiting for approval (reef security approvals approve <id> [always] | deny <id>):")
		for _, r := range v.Pending {
			fmt.Fprintf(w, "  %s  %s: %s in %s, %s left\n", r.ID, termtext.Line(r.Asker()), termtext.Quote(r.Command),
				termtext.Line(orWorkspaceDir(r.Workdir)), max(r.Deadline.Sub(now), 0).Round(time.Second))
		}
	}
	if len(v.Decisions) == 0 {
		fmt.Fprintln(w, "no decisions recorded")
	} else {
		fmt.Fprintf(w, "recent decisions (newest first, at most %d):\n", recentDecisions)
		for _, d := range v.Decisions {
			fmt.Fprintf(w, "  %s  %s  %-9s by %s: %s asked %s in %s\n", d.At.Local().Format("2006-01-02 15:04:05"), d.ID, d.Decision,
				termtext.Line(d.By), termtext.Line(d.Asker()), termtext.Quote(d.Command), termtext.Line(orWorkspaceDir(d.Workdir)))
		}
	}
	if len(v.Prefixes) == 0 {
		fmt.Fprintln(w, "no command prefix is allowed always")
		return
	}
	fmt.Fprintln(w, "allowed always (reef security approvals revoke <prefix>):")
	for _, p := range v.Prefixes {
		fmt.Fprintf(w, "  %s  by %s, %s\n", termtext.Quote(p.Prefix), termtext.Line(p.By), p.Added.Local().Format("2006-01-02 15:04"))
	}
}

func orWorkspaceDir(dir string) string {
	if dir == "" || dir == "." {
		return "the workspace"
	}
	return "the workspace's " + dir
}

// auditApprovals reports exec opened to guests (a grant that allows exec) while approvals are
// off: their commands run without the owner being asked.
func auditApprovals(a *audit, cfg *configs.Config) {
	mode := cfg.Tools.Exec.Approvals
	grants := guestExecGrants(cfg)
	switch {
	case mode == access.ApprovalsOff && len(grants) > 0:
		a.add(finding{Check: "execApprovals", Where: "tools.exec.approvals",
			Problem: "off, while guests may use exec (" + strings.Join(grants, ", ") + "): their commands run without the owner being asked",
			Fix:     "tools.exec.approvals: owner (a guest's command waits for your /approve), or take exec out of those grants"})
	case mode == access.ApprovalsOff:
		a.ok("execApprovals", "exec approvals", "off; no guest may use exec, so only the owner's own runs execute commands")
	case mode == access.ApprovalsAlways:
		a.ok("execApprovals", "exec approvals", fmt.Sprintf("always: every command waits for the owner's /approve (denied after %d s)", cfg.Tools.Exec.ApprovalTimeoutSeconds))
	default:
		a.ok("execApprovals", "exec approvals", fmt.Sprintf("owner: a command in a run the owner did not start waits for the owner's /approve (denied after %d s)", cfg.Tools.Exec.ApprovalTimeoutSeconds))
	}
}

// guestExecGrants lists the grants to guests that allow exec ("channels.telegram.groupTools.ops").
func guestExecGrants(cfg *configs.Config) []string {
	var out []string
	opens := func(allow []string) bool {
		for _, e := range allow {
			if e == "exec" || e == "group:runtime" || e == "*" {
				return true
			}
		}
		return false
	}
	for _, name := range configuredChannels(cfg) {
		g := channelAccess(cfg, name).Guests
		path := "channels." + name
		if opens(g.Tools.Allow) {
			out = append(out, path+".tools")
		}
		for id, gp := range g.GroupTools {
			if opens(gp.Allow) {
				out = append(out, path+".groupTools."+id)
			}
			for s, p := range gp.BySender {
				if opens(p.Allow) {
					out = append(out, path+".groupTools."+id+".bySender."+s)
				}
			}
		}
		for s, p := range g.ToolsBySender {
			if opens(p.Allow) {
				out = append(out, path+".toolsBySender."+s)
			}
		}
	}
	slices.Sort(out)
	return out
}

// waitsForApproval reports whether a run of the session waits for the owner's approval.
func waitsForApproval(r persistence.Reader, sessionKey string) (bool, error) {
	reqs, err := access.ExecRequests(r)
	return slices.ContainsFunc(reqs, func(req access.ExecRequest) bool { return req.SessionKey == sessionKey }), err
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
