package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/messages"
)

func testTools() []messages.ToolSpec {
	return []messages.ToolSpec{
		{Name: "read", Description: "Read a file in the workspace.\nLonger details the prompt should not carry."},
		{Name: "exec", Description: "Run a shell command."},
	}
}

func testWorkspace() Workspace {
	return Workspace{
		Dir: "/home/u/.reef/workspace",
		Files: []File{
			{Name: "AGENTS.md", Content: "agents rules"},
			{Name: "SOUL.md", Content: "be kind"},
			{Name: "MEMORY.md", Content: "remember: the spare key is under the mat"},
		},
		Skills: []Skill{
			{Name: "pdf", Description: "Fill <forms> & \"sign\" PDFs", Location: "skills/pdf/SKILL.md"},
			{Name: "weather", Description: "Weather now", Location: "skills/weather/SKILL.md"},
		},
	}
}

func testInput() PromptInput {
	return PromptInput{
		AgentID: "main", AgentName: "Reef", Model: "gpt-5", SessionKey: "agent:main:telegram:direct:42",
		Channel: "telegram", ChatType: "direct", Tools: testTools(), Workspace: testWorkspace(),
		Now: time.Date(2026, 11, 22, 11, 3, 0, 0, time.UTC), Location: time.FixedZone("CET", 3600), Host: "linux/amd64",
		Private: true,
	}
}

func TestBuildSystemPromptSectionsInOrder(t *testing.T) {
	prompt, stable := BuildSystemPrompt(testInput())
	order := []string{
		"You are Reef, a personal assistant running inside reef.",
		"## Tooling", "## Tool-call style", "## Safety", "## Skills", "<available_skills>", "## Workspace",
		"## Project context", "### AGENTS.md", "agents rules", "### SOUL.md", "### MEMORY.md", "## Output directives",
		"## Current time", "## Runtime", "## Conversation",
	}
	pos := 0
	for _, s := range order {
		i := strings.Index(prompt[pos:], s)
		if i < 0 {
			t.Fatalf("%q missing or out of order in:\n%s", s, prompt)
		}
		pos += i + len(s)
	}
	if !strings.HasPrefix(prompt[stable:], "\n## Current time\n") {
		t.Errorf("volatile part starts with %q, want the current time", prompt[stable:min(len(prompt), stable+40)])
	}
	for _, want := range []string{
		SilentToken, "/home/u/.reef/workspace", "<<<UNTRUSTED",
		"2026-11-22 11:03 UTC", "Sunday 2026-11-22 12:03 CET",
		"agent=main session=agent:main:telegram:direct:42 channel=telegram chat=direct model=gpt-5 host=linux/amd64",
	} {
		if !strings.Contains(prompt, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	if strings.Contains(prompt, "BOOTSTRAP") {
		t.Error("prompt mentions BOOTSTRAP without a bootstrap workspace")
	}
}

func TestBuildSystemPromptOnlyOfferedTools(t *testing.T) {
	tests := []struct {
		name    string
		tools   []messages.ToolSpec
		want    []string
		notWant []string
	}{
		{"two tools", testTools(), []string{"- exec — Run a shell command.\n- read — Read a file in the workspace.\n"},
			[]string{"Longer details", "- write", "web_fetch"}},
		{"no tools", nil, []string{"You have no tools"}, []string{"- read", "- exec", "<available_skills>"}},
		{"no read tool: no skills", []messages.ToolSpec{{Name: "exec"}}, []string{"- exec\n"}, []string{"<available_skills>", "- read"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := testInput()
			in.Tools = tt.tools
			prompt, _ := BuildSystemPrompt(in)
			tooling := section(prompt, "## Tooling")
			for _, w := range tt.want {
				if !strings.Contains(prompt, w) {
					t.Errorf("prompt lacks %q; tooling:\n%s", w, tooling)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(prompt, w) {
					t.Errorf("prompt has %q; tooling:\n%s", w, tooling)
				}
			}
		})
	}
}

// section returns the text of a "## " section of prompt.
func section(prompt, header string) string {
	_, after, _ := strings.Cut(prompt, header+"\n")
	body, _, _ := strings.Cut(after, "\n## ")
	return body
}

func TestBuildSystemPromptSkills(t *testing.T) {
	prompt, _ := BuildSystemPrompt(testInput())
	want := "<available_skills>\n" +
		"<skill><name>pdf</name><description>Fill &lt;forms&gt; &amp; &quot;sign&quot; PDFs</description><location>skills/pdf/SKILL.md</location></skill>\n" +
		"<skill><name>weather</name><description>Weather now</description><location>skills/weather/SKILL.md</location></skill>\n" +
		"</available_skills>\n"
	if !strings.Contains(prompt, want) {
		t.Errorf("skills block not found; skills section:\n%s", section(prompt, "## Skills"))
	}
	if !strings.Contains(section(prompt, "## Skills"), "read tool") {
		t.Error("skills section does not say to read SKILL.md with the read tool")
	}

	in := testInput()
	in.Workspace.Skills = nil
	if prompt, _ := BuildSystemPrompt(in); strings.Contains(prompt, "## Skills") {
		t.Error("skills section present without skills")
	}
}

func TestBuildSystemPromptStablePrefix(t *testing.T) {
	a := testInput()
	b := testInput()
	b.Now = a.Now.Add(26*time.Hour + 17*time.Minute)
	b.Location = time.FixedZone("JST", 9*3600)
	b.SessionKey = "agent:main:telegram:direct:43"
	b.Channel = "discord"
	b.Model = "claude-sonnet-4"
	b.AgentID = "other"
	b.ExtraSystem = "Answer in French."
	pa, sa := BuildSystemPrompt(a)
	pb, sb := BuildSystemPrompt(b)
	if sa != sb || pa[:sa] != pb[:sb] {
		t.Fatalf("stable prefixes differ:\n--- a\n%s\n--- b\n%s", pa[:sa], pb[:sb])
	}
	if pa[sa:] == pb[sb:] {
		t.Error("volatile parts are identical although time and session differ")
	}
	for _, volatile := range []string{"2026", "agent:main:telegram", "telegram", "gpt-5", "linux/amd64"} {
		if strings.Contains(pa[:sa], volatile) {
			t.Errorf("stable prefix contains per-turn value %q", volatile)
		}
	}
	if !strings.Contains(pb[sb:], "Answer in French.") {
		t.Error("ExtraSystem missing from the volatile part")
	}
	// Tool order given by the caller does not change the prefix.
	c := testInput()
	c.Tools = []messages.ToolSpec{c.Tools[1], c.Tools[0]}
	if pc, sc := BuildSystemPrompt(c); pc[:sc] != pa[:sa] {
		t.Error("tool order changed the stable prefix")
	}
}

func TestBuildSystemPromptGroupHidesMemory(t *testing.T) {
	in := testInput()
	in.ChatType = "group"
	prompt, stable := BuildSystemPrompt(in)
	if strings.Contains(prompt, "spare key") || strings.Contains(prompt, "### MEMORY.md") {
		t.Error("MEMORY.md injected into a group chat")
	}
	if !strings.Contains(prompt[stable:], "group chat") || !strings.Contains(prompt[stable:], SilentToken) {
		t.Errorf("group guidance missing from the volatile part:\n%s", prompt[stable:])
	}
}

// A run without the owner's standing (a guest's direct chat) gets neither MEMORY.md nor
// USER.md (#39).
func TestBuildSystemPromptGuestHidesPrivateFiles(t *testing.T) {
	in := testInput()
	in.Private = false
	in.Workspace.Files = append(in.Workspace.Files, File{Name: "USER.md", Content: "the owner's bank is Canary Bank"})
	prompt, _ := BuildSystemPrompt(in)
	for _, leak := range []string{"spare key", "Canary Bank", "### MEMORY.md", "### USER.md"} {
		if strings.Contains(prompt, leak) {
			t.Errorf("a guest's prompt holds %q", leak)
		}
	}
	if !strings.Contains(prompt, "### SOUL.md") {
		t.Error("a guest's prompt lost SOUL.md")
	}
	in.Private = true
	if prompt, _ := BuildSystemPrompt(in); !strings.Contains(prompt, "Canary Bank") || !strings.Contains(prompt, "spare key") {
		t.Error("the owner's prompt lost USER.md or MEMORY.md")
	}
}

func TestBuildSystemPromptBootstrapAndDefaults(t *testing.T) {
	in := PromptInput{Workspace: Workspace{Bootstrap: true, Files: []File{{Name: "BOOTSTRAP.md", Content: "ritual"}}}}
	prompt, stable := BuildSystemPrompt(in)
	if !strings.HasPrefix(prompt, "You are a personal assistant running inside reef.\nThis is your first run: BOOTSTRAP.md") {
		t.Errorf("prompt starts %q, want the bootstrap instruction after the identity line", prompt[:120])
	}
	if !strings.Contains(prompt[stable:], "UTC") || !strings.Contains(prompt[stable:], "agent=- session=-") {
		t.Errorf("volatile part with defaults:\n%s", prompt[stable:])
	}
}

func BenchmarkBuildSystemPrompt(b *testing.B) {
	in := testInput()
	in.Workspace.Files = append(in.Workspace.Files, File{Name: "TOOLS.md", Content: strings.Repeat("notes about tools\n", 500)})
	for i := range 40 {
		in.Tools = append(in.Tools, messages.ToolSpec{Name: "tool" + string(rune('a'+i%26)), Description: "Does a thing."})
	}
	b.ReportAllocs()
	for b.Loop() {
		BuildSystemPrompt(in)
	}
}

func TestCurrentTimeFollowsTheMinuteAndZone(t *testing.T) {
	section := func(now time.Time, loc *time.Location) string {
		var b strings.Builder
		writeTime(&b, now, loc)
		return b.String()
	}
	now := time.Date(2026, 11, 22, 11, 3, 10, 0, time.UTC)
	cet, jst := time.FixedZone("CET", 3600), time.FixedZone("JST", 9*3600)
	for _, c := range []struct {
		now  time.Time
		loc  *time.Location
		want string
	}{
		{now, cet, "Sunday 2026-11-22 12:03 CET (UTC+01:00); 2026-11-22 11:03 UTC"},
		{now.Add(40 * time.Second), cet, "Sunday 2026-11-22 12:03 CET (UTC+01:00); 2026-11-22 11:03 UTC"},
		{now.Add(50 * time.Second), cet, "Sunday 2026-11-22 12:04 CET (UTC+01:00); 2026-11-22 11:04 UTC"},
		{now.Add(50 * time.Second), jst, "Sunday 2026-11-22 20:04 JST (UTC+09:00); 2026-11-22 11:04 UTC"},
		{now.Add(50 * time.Second), time.UTC, "2026-11-22 11:04 UTC (Sunday)"},
	} {
		if got := section(c.now, c.loc); got != "\n## Current time\n"+c.want+"\n" {
			t.Errorf("%v in %v: %q, want %q", c.now, c.loc, got, c.want)
		}
	}
}

// TestPromptMemorySection: the recall instructions come with memory_search, in the stable
// prefix, and not without it.
func TestPromptMemorySection(t *testing.T) {
	with := PromptInput{Tools: []messages.ToolSpec{{Name: "memory_search"}, {Name: "memory_get"}}}
	prompt, stable := BuildSystemPrompt(with)
	i := strings.Index(prompt, "## Memory recall")
	if i < 0 || i > stable || !strings.Contains(prompt, "path#Lstart-Lend") {
		t.Fatalf("memory section missing or volatile (at %d, stable %d)", i, stable)
	}
	if p, _ := BuildSystemPrompt(PromptInput{Tools: []messages.ToolSpec{{Name: "read"}}}); strings.Contains(p, "## Memory recall") {
		t.Error("the memory section is there without memory_search")
	}
}

// TestPersona: agents[].systemPrompt is in the stable prefix after the workspace files, and
// an empty one leaves no section.
func TestPersona(t *testing.T) {
	in := testInput()
	in.Persona = "  Always answer in the user's language.\n"
	prompt, stable := BuildSystemPrompt(in)
	persona := strings.Index(prompt, "## Persona\nAlways answer in the user's language.\n")
	if persona < 0 || persona > stable {
		t.Fatalf("persona not in the stable prefix (at %d, prefix %d):\n%s", persona, stable, prompt)
	}
	if ctx := strings.Index(prompt, "## Project context"); ctx < 0 || ctx > persona {
		t.Errorf("persona comes before the workspace files (context at %d, persona at %d)", ctx, persona)
	}
	if p, _ := BuildSystemPrompt(testInput()); strings.Contains(p, "## Persona") {
		t.Error("a persona section without a persona")
	}
}
