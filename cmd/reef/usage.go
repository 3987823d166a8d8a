package main

import (
	"cmp"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/persistence"
	ledger "github.com/reefgw/reef/usage"
)

// reef usage: the token ledger (package usage) summed per day, agent, model and channel, with
// a cost from models.<ref>.cost. The Control UI's Usage page shows the same report.

// usageDaysMax bounds how far back a report reaches.
const usageDaysMax = 366

func runUsage(args []string, stdout, stderr io.Writer) int {
	flags, configPath := commandFlags("usage", stderr)
	days := flags.Int("days", 7, "the last N days, today included")
	asJSON := flags.Bool("json", false, "print JSON")
	if code, ok := parseFlags(flags, args, stdout); !ok {
		return code
	}
	if *days < 1 || *days > usageDaysMax {
		fmt.Fprintf(stderr, "reef usage: -days must be 1 to %d\n", usageDaysMax)
		return 2
	}
	cfg := adminConfig(*configPath, stderr)
	if cfg == nil {
		return 2
	}
	var rep ledger.Report
	var err error
	if c := dialControl(cfg); c != nil {
		err = c.getJSON("/usage", url.Values{"days": {strconv.Itoa(*days)}}, &rep)
	} else {
		var store persistence.Store
		if store, err = openStore(cfg); err == nil {
			rep, err = usageReport(store, cfg, *days, time.Now())
			store.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "reef usage: %v\n", err)
		return 1
	}
	if *asJSON {
		return exitOf(printJSON(stdout, rep))
	}
	printLedger(stdout, rep)
	return 0
}

func exitOf(err error) int {
	if err != nil {
		return 1
	}
	return 0
}

// usageReport reads the ledger of the last days days and prices it by the config.
func usageReport(store persistence.Store, cfg *configs.Config, days int, now time.Time) (ledger.Report, error) {
	from, to := ledger.Range(now, days)
	var rows []ledger.Row
	err := store.View(func(r persistence.Reader) (err error) {
		rows, err = ledger.Read(r, from, to)
		return err
	})
	return ledger.Build(rows, modelPrices(cfg), from, to), err
}

// modelPrices are the configured models.<ref>.cost.
func modelPrices(cfg *configs.Config) map[string]ledger.Price {
	out := map[string]ledger.Price{}
	for ref, m := range cfg.Models {
		if c := m.Cost; c != (configs.ModelCost{}) {
			out[ref] = ledger.Price{Input: c.Input, Output: c.Output, CacheRead: c.CacheRead}
		}
	}
	return out
}

// serveUsage is the control socket's GET /usage?days=N.
func serveUsage(store persistence.Store, cfg *configs.Config) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		days, err := strconv.Atoi(cmp.Or(r.URL.Query().Get("days"), "7"))
		if err != nil || days < 1 || days > usageDaysMax {
			http.Error(w, fmt.Sprintf("days must be 1 to %d", usageDaysMax), http.StatusBadRequest)
			return
		}
		rep, err := usageReport(store, cfg, days, time.Now())
		replyJSON(w, rep, err)
	}
}

func printLedger(w io.Writer, rep ledger.Report) {
	fmt.Fprintf(w, "tokens %s to %s: %s in, %s out (%s cached), cost %s\n", rep.From, rep.To,
		tokenCount(rep.Total.InputTokens), tokenCount(rep.Total.OutputTokens), tokenCount(rep.Total.CacheReadTokens), costText(rep.Total))
	for _, t := range []struct {
		head  string
		lines []ledger.Line
	}{{"DAY", rep.Days}, {"AGENT", rep.Agents}, {"MODEL", rep.Models}, {"CHANNEL", rep.Channels}} {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "%s\tINPUT\tOUTPUT\tCACHED\tCOST\t\n", t.head)
		for _, l := range t.lines {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", l.Name, tokenCount(l.InputTokens), tokenCount(l.OutputTokens), tokenCount(l.CacheReadTokens), costText(l))
		}
		if len(t.lines) == 0 {
			fmt.Fprintln(tw, "none\t\t\t\t\t")
		}
		tw.Flush()
	}
}

// count writes a token count as people read it: 950, 12.3k, 4.1M.
func tokenCount(n int) string {
	switch {
	case n < 1000:
		return strconv.Itoa(n)
	case n < 1_000_000:
		return strconv.FormatFloat(float64(n)/1e3, 'f', 1, 64) + "k"
	}
	return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + "M"
}

// costText is a line's cost, "-" when nothing of it is priced, with "+" when part is not.
func costText(l ledger.Line) string {
	switch {
	case l.Cost == 0 && !l.Priced:
		return "-"
	case !l.Priced:
		return fmt.Sprintf("%.4f+", l.Cost)
	}
	return fmt.Sprintf("%.4f", l.Cost)
}
