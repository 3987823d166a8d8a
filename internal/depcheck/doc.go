// Package depcheck enforces the import rules of DESIGN.md §1 as a test.
//
// Check parses the imports of every Go file in the module (test files included; vendor,
// testdata and directories starting with "." or "_" excluded) and returns each import that
// breaks a rule of the table in rules.go:
//
//   - messages imports only the standard library;
//   - only actors, cmd/... and internal/testutil import protoactor;
//   - agent, providers, tools, channels, persistence and configs never import actors;
//   - nothing imports actors or cmd except cmd/... (and the tests of actors);
//   - a plugin (a direct child of providers, tools, channels or persistence, with everything
//     below it) never imports a sibling plugin, except one named fake, one whose name ends
//     in "test" (openaitest, storetest, channeltest), providers/sse, and the parent's
//     internal directory (providers/internal/reqbody), whose helpers import no plugin;
//   - agent imports no reef package but messages.
//
// A package may always import itself (an external _test package does).
//
// CheckBinaries applies the rules of whole programs (binaryRules): everything cmd/reef links
// (`go list -deps`, for Linux and macOS) is free of test code: no testing, no
// net/http/httptest, no package whose name ends in "test". The standard library's own
// internal/testlog and internal/synctest are allowed: os and sync import them, so every Go
// program links them.
// The test in depcheck_test.go runs Check on this module.
package depcheck
