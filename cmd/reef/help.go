package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Every command and subcommand answers -h, -help and --help with its usage on stdout and exit
// status 0. A flag it does not know gets the problem and the usage on stderr, and status 2.

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}

// newFlags returns a command's flag set. It prints no usage itself: parseFlags and flagExit do,
// on stdout when it was asked for.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	flags := flag.NewFlagSet(name, flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.Usage = func() {}
	return flags
}

// parseFlags parses a command's flags. When it returns false the command ends with code: 0
// after printing the usage asked for, 2 after a bad flag.
func parseFlags(flags *flag.FlagSet, args []string, stdout io.Writer) (code int, ok bool) {
	if err := flags.Parse(args); err != nil {
		return flagExit(err, flags, stdout), false
	}
	return 0, true
}

// flagExit prints the usage of flags' command for a parse error err and returns the exit
// status: on stdout and 0 for a request for help, on stderr (after the flag package's word on
// what was wrong) and 2 otherwise.
func flagExit(err error, flags *flag.FlagSet, stdout io.Writer) int {
	w, code := flags.Output(), 2
	if errors.Is(err, flag.ErrHelp) {
		w, code = stdout, 0
	}
	printUsage(w, flags)
	return code
}

// printUsage prints the synopsis of flags' command and its flags.
func printUsage(w io.Writer, flags *flag.FlagSet) {
	fmt.Fprint(w, commandUsage(flags.Name()))
	out := flags.Output()
	flags.SetOutput(w)
	defer flags.SetOutput(out)
	fmt.Fprintln(w, "\nFlags:")
	flags.PrintDefaults()
}

// commandUsage returns the usage of command name ("cron", "sessions list"): its own usage
// text where it has one, else its lines of reef's usage.
func commandUsage(name string) string {
	word, _, _ := strings.Cut(name, " ")
	switch word {
	case "sessions":
		return sessionsUsage + "\n"
	case "cron":
		return cronUsage + "\n"
	case "security":
		return securityUsage + "\n"
	case "skills":
		return skillsUsage + "\n"
	}
	var b strings.Builder
	b.WriteString("Usage:\n")
	in := false
	for _, line := range strings.Split(usage, "\n") {
		switch {
		case strings.HasPrefix(line, "  reef "+word+" ") || line == "  reef "+word:
			in = true
		case !strings.HasPrefix(line, "     "): // not a continuation
			in = false
		}
		if in {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}
