package web

import (
	"errors"
	"fmt"
	"html/template"
	"strings"

	"github.com/reefgw/reef/usage"
)

// usageChart draws the tokens per day as an inline SVG bar chart (input below, output on
// top), rendered here so the page needs no script or chart library. Every text in it is
// escaped.
func usageChart(days []usage.Line) template.HTML {
	const w, h, top, bottom, left = 640, 180, 12, 28, 48
	peak := 0
	for _, d := range days {
		peak = max(peak, d.Total())
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" role="img" aria-label="tokens per day" xmlns="http://www.w3.org/2000/svg">`, w, h)
	plot := float64(h - top - bottom)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="currentColor" stroke-opacity="0.3"/>`, left, h-bottom, w, h-bottom)
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" text-anchor="end" fill="currentColor">%s</text>`, left-4, top+8, tokenCount(peak))
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" text-anchor="end" fill="currentColor">0</text>`, left-4, h-bottom)
	if n := len(days); n > 0 {
		slot := float64(w-left) / float64(n)
		bar := max(slot*0.7, 1)
		for i, d := range days {
			x := float64(left) + float64(i)*slot + (slot-bar)/2
			scale := 0.0
			if peak > 0 {
				scale = plot / float64(peak)
			}
			in, out := float64(d.InputTokens)*scale, float64(d.OutputTokens)*scale
			label := template.HTMLEscapeString(fmt.Sprintf("%s: %s in, %s out", d.Name, tokenCount(d.InputTokens), tokenCount(d.OutputTokens)))
			fmt.Fprintf(&b, `<g class="day"><title>%s</title>`, label)
			fmt.Fprintf(&b, `<rect class="in" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#3b82f6"/>`, x, float64(h-bottom)-in, bar, in)
			fmt.Fprintf(&b, `<rect class="out" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#f59e0b"/>`, x, float64(h-bottom)-in-out, bar, out)
			b.WriteString(`</g>`)
			if n <= 16 || i%((n+15)/16) == 0 {
				fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="10" text-anchor="middle" fill="currentColor">%s</text>`,
					x+bar/2, h-bottom+14, template.HTMLEscapeString(shortDay(d.Name)))
			}
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // built from numbers and escaped text only
}

// shortDay is "12-07" for "2026-12-07".
func shortDay(day string) string {
	if len(day) == 10 {
		return day[5:]
	}
	return day
}

// tokenCount writes a token count as people read it: 950, 12.3k, 4.1M.
func tokenCount(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}

// money writes a cost; "-" when nothing of the line has a price.
func money(l usage.Line) string {
	switch {
	case l.Cost == 0 && !l.Priced:
		return "-"
	case !l.Priced:
		return fmt.Sprintf("%.4f + unpriced", l.Cost)
	}
	return fmt.Sprintf("%.4f", l.Cost)
}

func isBackendErr(err error) bool {
	return errors.Is(err, ErrNotFound) || errors.Is(err, ErrBadInput)
}
