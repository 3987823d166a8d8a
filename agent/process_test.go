package agent

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reefgw/reef/messages"
)

func TestParseProcess(t *testing.T) {
	fence := "```openclaw-process\n"
	tests := []struct {
		name   string
		text   string
		clean  string
		blocks []ProcessBlock
	}{
		{name: "no blocks", text: "Hello\n\n\n```go\nx\n```\n", clean: "Hello\n\n\n```go\nx\n```\n"},
		{
			name: "start, two steps, final",
			text: fence + `{"type":"start","goal":"weather report","inputs":["Beijing"]}` + "\n```\n" +
				"Looking it up.\n\n" +
				fence + `{"type":"step","id":"fetch","title":"Fetch","status":"running","progress":40}` + "\n```\n" +
				fence + `{"step":{"id":2,"title":"Write","status":"completed","progress":140,"notes":"n"}}` + "\n```\n\n" +
				"It is sunny.\n" +
				fence + `{"type":"final","summary":"done","next":[]}` + "\n```\n",
			clean: "Looking it up.\n\nIt is sunny.",
			blocks: []ProcessBlock{
				{Start: &ProcessStart{Goal: "weather report", Inputs: []byte(`["Beijing"]`)}},
				{Step: &messages.PlanStep{ID: "fetch", Title: "Fetch", Status: "running", Progress: 40}},
				{Step: &messages.PlanStep{ID: "2", Title: "Write", Status: "done", Progress: 100, Notes: "n"}},
				{Final: &ProcessFinal{Summary: "done", Next: []byte(`[]`)}},
			},
		},
		{
			name:  "malformed JSON stays visible",
			text:  "a\n" + fence + "{\"type\":\"step\",\n```\nb",
			clean: "a\n" + fence + "{\"type\":\"step\",\n```\nb",
		},
		{
			name:   "unknown kind and bad status stay, good block goes",
			text:   fence + `{"type":"launch"}` + "\n```\n" + fence + `{"type":"step","id":"x","status":"maybe"}` + "\n```\n" + fence + `{"type":"step","title":"T"}` + "\n```\nok",
			clean:  fence + `{"type":"launch"}` + "\n```\n" + fence + `{"type":"step","id":"x","status":"maybe"}` + "\n```\nok",
			blocks: []ProcessBlock{{Step: &messages.PlanStep{ID: "T", Title: "T", Status: "pending"}}},
		},
		{
			// OpenClaw's own shape: notes and summary as arrays of strings (#33.12).
			name: "notes and summary as arrays",
			text: "Done.\n" + fence + `{"type":"step","id":"s1","title":"Fetch","status":"done","notes":["got 3 pages","one empty"]}` + "\n```\n" +
				fence + `{"type":"final","summary":["Forecast fetched","Tides tabled"],"artifacts":["tides.md"]}` + "\n```",
			clean: "Done.",
			blocks: []ProcessBlock{
				{Step: &messages.PlanStep{ID: "s1", Title: "Fetch", Status: "done", Notes: "got 3 pages\none empty"}},
				{Final: &ProcessFinal{Summary: "Forecast fetched\nTides tabled", Artifacts: []byte(`["tides.md"]`)}},
			},
		},
		{name: "notes of another shape stay", text: fence + `{"type":"step","id":"x","notes":{"a":1}}` + "\n```", clean: fence + `{"type":"step","id":"x","notes":{"a":1}}` + "\n```"},
		{name: "unclosed fence stays", text: "x\n" + fence + `{"type":"final"}`, clean: "x\n" + fence + `{"type":"final"}`},
		{name: "two objects in one block stay", text: fence + `{"type":"final"}{"type":"final"}` + "\n```", clean: fence + `{"type":"final"}{"type":"final"}` + "\n```"},
		{name: "a step without id or title stays", text: fence + `{"type":"step","status":"done"}` + "\n```", clean: fence + `{"type":"step","status":"done"}` + "\n```"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clean, blocks := ParseProcess(tc.text)
			if clean != tc.clean {
				t.Errorf("text: got %q, want %q", clean, tc.clean)
			}
			if diff := cmp.Diff(tc.blocks, blocks); diff != "" {
				t.Errorf("blocks (-want +got):\n%s", diff)
			}
		})
	}
}
