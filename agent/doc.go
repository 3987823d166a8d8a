// Package agent holds reef's pure agent logic: the workspace an agent lives in, its skills, the
// system prompt, how inbound messages and untrusted data are shown to the model, and the context
// budget (token estimates, model context windows, tool-result truncation, compaction planning
// and the summary and memory-flush prompts).
//
// Nothing here starts a goroutine, talks to the network or keeps state between calls. The only
// I/O is creating and reading the workspace directory, always through an [os.Root] so that a
// symlink or a "../" cannot make reef read or write outside it. Every function is safe for
// concurrent use.
//
// A Turn uses the package like this:
//
//	ws, err := agent.LoadWorkspace(dir)           // files to inject, skills, warnings to log
//	prompt, stable := agent.BuildSystemPrompt(agent.PromptInput{Workspace: ws, ...})
//	user := agent.FormatInbound(inbound)          // metadata and quoted text wrapped as untrusted
//	result = agent.TruncateToolResult(result, window)
//
// prompt[:stable] is byte-identical from turn to turn (no time, no session key), so providers
// that cache prompt prefixes can reuse it; the volatile part after it carries the time and the
// runtime line.
package agent
