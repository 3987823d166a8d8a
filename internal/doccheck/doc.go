// Package doccheck keeps the repository's Markdown honest: every relative link in README.md,
// BENCHMARKS.md, docs/*.md and the other tracked Markdown files (internal/third_party aside)
// must point at a file that exists, and a #fragment into a Markdown file must name one of its
// headings, slugged the way GitHub slugs them. The checks run as tests (go test ./...), so a
// moved page or a renamed heading fails CI instead of leaving a dead link.
package doccheck
