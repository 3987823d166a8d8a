package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/schedule"
	"github.com/reefgw/reef/tools"
)

const cronUsage = `usage:
  reef cron list [-json]
  reef cron add -name NAME (-cron "10 18 * * *" [-tz Asia/Shanghai] | -every 1h | -at 2026-03-08T09:00 [-tz ZONE])
                -text TEXT [-isolated] [-deliver announce|none|CHANNEL:CHAT]
  reef cron rm|run|runs|enable|disable ID
-json (anywhere) prints the answer as JSON instead of text.
Through the running gateway when one runs, else on the database (run needs a running gateway).`

// runCron lists and changes scheduled jobs.
func runCron(args []string, stdout, stderr io.Writer) int {
	flags, configPath := commandFlags("cron", stderr)
	asJSON := flags.Bool("json", false, "print JSON")
	if code, ok := parseFlags(flags, args, stdout); !ok {
		return code
	}
	rest, jsonLater := takeJSONFlag(flags.Args())
	if len(rest) == 0 {
		fmt.Fprintln(stderr, cronUsage)
		return 2
	}
	action, body, err := cronArgs(rest)
	if errors.Is(err, flag.ErrHelp) || isHelp(rest[0]) || (rest[0] != "add" && slices.ContainsFunc(rest[1:], isHelp)) {
		fmt.Fprintln(stdout, cronUsage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "reef cron: %v\n%s\n", err, cronUsage)
		return 2
	}
	cfg := adminConfig(*configPath, stderr)
	if cfg == nil {
		return 2
	}
	out, err := cronCall(cfg, action, body)
	if err != nil {
		fmt.Fprintf(stderr, "reef cron %s: %v\n", rest[0], err)
		return 1
	}
	if *asJSON || jsonLater {
		fmt.Fprintf(stdout, "%s\n", out)
		return 0
	}
	return printCron(stdout, stderr, rest[0], out)
}

// takeJSONFlag removes -json from the arguments after the cron verb ("reef cron rm ID -json"),
// except where it is the value of one of add's flags (-text -json).
func takeJSONFlag(args []string) ([]string, bool) {
	var out []string
	found := false
	for i, a := range args {
		valueOf := i > 0 && cronValueFlag[strings.TrimLeft(args[i-1], "-")] && !strings.Contains(args[i-1], "=")
		if (a == "-json" || a == "--json") && !valueOf {
			found = true
			continue
		}
		out = append(out, a)
	}
	return out, found
}

// cronValueFlag names the flags of `reef cron add` that take a value.
var cronValueFlag = map[string]bool{"name": true, "cron": true, "tz": true, "every": true, "at": true, "text": true, "deliver": true}

// cronArgs turns the command line into a cron tool action and its JSON arguments.
func cronArgs(rest []string) (string, []byte, error) {
	verb := rest[0]
	switch verb {
	case "list":
		return "list", []byte(`{}`), nil
	case "add":
		return cronAddArgs(rest[1:])
	case "rm", "run", "runs", "enable", "disable":
		if len(rest) != 2 {
			return "", nil, fmt.Errorf("%s needs a job id", verb)
		}
		args := map[string]any{"id": rest[1]}
		action := map[string]string{"rm": "remove", "run": "run", "runs": "runs", "enable": "update", "disable": "update"}[verb]
		if action == "update" {
			args["patch"] = map[string]any{"enabled": verb == "enable"}
		}
		b, err := json.Marshal(args)
		return action, b, err
	}
	return "", nil, fmt.Errorf("unknown cron command %q", verb)
}

func cronAddArgs(args []string) (string, []byte, error) {
	f := flag.NewFlagSet("cron add", flag.ContinueOnError)
	f.SetOutput(io.Discard)
	name, expr, tz := f.String("name", "", ""), f.String("cron", "", ""), f.String("tz", "", "")
	every, at, text := f.Duration("every", 0, ""), f.String("at", "", ""), f.String("text", "", "")
	isolated, deliver := f.Bool("isolated", false, ""), f.String("deliver", "announce", "")
	if err := f.Parse(args); err != nil {
		return "", nil, err
	}
	sched := schedule.Spec{TZ: *tz}
	switch {
	case *expr != "":
		sched.Kind, sched.Expr = "cron", *expr
	case *every != 0:
		sched.Kind, sched.EveryMs = "every", every.Milliseconds()
	case *at != "":
		sched.Kind, sched.At = "at", *at
	default:
		return "", nil, errors.New("add needs -cron, -every or -at")
	}
	payload := schedule.Payload{Kind: "systemEvent", Text: *text}
	if *isolated {
		payload = schedule.Payload{Kind: "agentTurn", Message: *text}
	}
	delivery := schedule.Delivery{Mode: *deliver}
	if ch, to, ok := strings.Cut(*deliver, ":"); ok {
		delivery = schedule.Delivery{Mode: "channel", Channel: ch, To: to}
	}
	b, err := json.Marshal(schedule.Args{Job: &schedule.JobInput{Name: *name, Schedule: &sched, Payload: &payload, Delivery: &delivery}})
	return "add", b, err
}

// cronCall performs the action through the running gateway, or on the database.
func cronCall(cfg *configs.Config, action string, body []byte) (json.RawMessage, error) {
	if c := dialControl(cfg); c != nil {
		return c.cron(action, body)
	}
	store, err := openStore(cfg)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	var a schedule.Args
	if err := tools.DecodeArgs(body, &a); err != nil {
		return nil, fmt.Errorf("cron: %w", err)
	}
	return schedule.Offline(store, cfg.Agents[0].ID, action, a, time.Now())
}

func (c *controlClient) cron(action string, body []byte) (json.RawMessage, error) {
	resp, err := c.http.Post("http://reef/cron/"+action, "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, errors.New(strings.TrimSpace(string(b)))
	}
	return b, nil
}

// serveCron is the control socket's cron route: POST /cron/{action} with the tool's JSON.
func serveCron(rt *running) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err == nil {
			ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
			defer cancel()
			var out json.RawMessage
			if out, err = rt.Cron(ctx, r.PathValue("action"), body); err == nil {
				w.Write(out)
				return
			}
		}
		http.Error(w, err.Error(), http.StatusBadRequest)
	}
}
