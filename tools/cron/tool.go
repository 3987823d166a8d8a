// Package cron is the agent-facing `cron` tool: agents schedule reminders and recurring
// work with it. The job model lives in package schedule; the tool hands the action to the
// Timer through tools.Runtime. Who may call it is the tool policy's business (it is one of
// tools.OwnerTools): a run that may not use it is never offered it, and a call is refused
// before the tool runs.
package cron

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/schedule"
	"github.com/reefgw/reef/tools"
)

// Tool is the `cron` tool: agents schedule reminders and recurring work with it. It needs a
// runtime (the Timer).
type Tool struct{}

var _ tools.Tool = Tool{}

// New returns the cron tool.
func New() Tool { return Tool{} }

func (Tool) Spec() messages.ToolSpec {
	return messages.ToolSpec{Name: "cron", Description: description, Parameters: json.RawMessage(schema)}
}

func (Tool) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	var args schedule.Args
	if err := tools.DecodeArgs(call.Args, &args); err != nil {
		return tools.Result{}, err
	}
	known := false
	for _, a := range schedule.Actions {
		known = known || a == args.Action
	}
	if !known {
		return tools.Result{}, fmt.Errorf("unknown action %q; use one of status, list, get, add, update, remove, run, runs", args.Action)
	}
	if call.Env.Runtime == nil {
		return tools.Result{}, errors.New("cron is not available here (no scheduler is running)")
	}
	if err := checkDelivery(call.Env, args); err != nil {
		return tools.Result{}, err
	}
	raw := call.Args
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	out, err := call.Env.Runtime.Cron(ctx, call.Env.AgentID, call.Env.SessionKey, args.Action, raw)
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Content: string(out)}, nil
}

const description = `Schedule reminders and recurring work for yourself. Actions: status, list, get {id}, ` +
	`add {job}, update {id, patch}, remove {id}, run {id} (now), runs {id, limit}. A job: name; schedule ` +
	`{kind:"cron", expr:"10 18 * * *", tz:"Asia/Shanghai"} | {kind:"every", everyMs:3600000} | ` +
	`{kind:"at", at:"2026-03-08T09:00", tz:"Europe/Berlin"}; payload {kind:"systemEvent", text} (arrives in this ` +
	`conversation) or {kind:"agentTurn", message} (runs in a separate session); sessionTarget main|isolated; ` +
	`wakeMode now|next-heartbeat; delivery {mode:"announce"|"none"|"channel", channel, to}; enabled. ` +
	`Write the text as an instruction to yourself. Use the user's time zone.`

const schema = `{"type":"object","properties":{
"action":{"type":"string","enum":["status","list","get","add","update","remove","run","runs"]},
"id":{"type":"string","description":"job id (get, update, remove, run, runs)"},
"job":{"$ref":"#/$defs/job"},
"patch":{"$ref":"#/$defs/job"},
"limit":{"type":"integer","description":"runs: how many recent runs"}},
"required":["action"],
"$defs":{"job":{"type":"object","properties":{
"name":{"type":"string"},
"schedule":{"type":"object","properties":{"kind":{"type":"string","enum":["cron","every","at"]},
"expr":{"type":"string"},"tz":{"type":"string"},"everyMs":{"type":"integer"},"at":{"type":"string"}},"required":["kind"]},
"payload":{"type":"object","properties":{"kind":{"type":"string","enum":["systemEvent","agentTurn"]},
"text":{"type":"string"},"message":{"type":"string"}},"required":["kind"]},
"sessionTarget":{"type":"string","enum":["main","isolated"]},
"wakeMode":{"type":"string","enum":["now","next-heartbeat"]},
"delivery":{"type":"object","properties":{"mode":{"type":"string","enum":["announce","channel","none"]},
"channel":{"type":"string"},"to":{"type":"string"}}},
"enabled":{"type":"boolean"},"deleteAfterRun":{"type":"boolean"}}}}}`

// checkDelivery applies the message tool's target rule to a job's delivery: a job's reply
// goes to the conversation it was made in (mode announce) or nowhere; delivering to another
// chat (mode channel) needs the rights of sessions_send, the owner's by default, so a guest
// granted cron cannot post into someone else's chat. A job made from no session (the
// operator's) is not limited.
func checkDelivery(env tools.Env, args schedule.Args) error {
	if env.SessionKey == "" || slices.Contains(env.Tools, "sessions_send") {
		return nil
	}
	for _, in := range []*schedule.JobInput{args.Job, args.Patch} {
		if in != nil && in.Delivery != nil && in.Delivery.Mode == "channel" {
			return errors.New(`delivery mode "channel" (to another chat) is not allowed in this conversation: it needs the rights of sessions_send, the owner's by default; use mode "announce" to deliver to this conversation`)
		}
	}
	return nil
}
