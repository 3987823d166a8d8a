package web

import (
	"fmt"
	"html/template"
	"io"
	"sync"
)

// lazyTemplates parses each page's template (with the layout) when the page is first shown
// and keeps it: a gateway whose Control UI nobody opens holds no parsed page (they take
// ~25 KB each). newPages parses each once at start to catch mistakes, and drops the result.
type lazyTemplates struct {
	mu     sync.Mutex
	files  map[string]string // page name → its file
	parsed map[string]*template.Template
}

func (l *lazyTemplates) add(name, file string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.files == nil {
		l.files, l.parsed = map[string]string{}, map[string]*template.Template{}
	}
	l.files[name] = file
}

// execute renders the page name's "layout" with v into w.
func (l *lazyTemplates) execute(w io.Writer, name string, v any) error {
	l.mu.Lock()
	t := l.parsed[name]
	if t == nil {
		file, ok := l.files[name]
		if !ok {
			l.mu.Unlock()
			return fmt.Errorf("web: no page template %q", name)
		}
		var err error
		if t, err = parseTemplate(name, file); err != nil {
			l.mu.Unlock()
			return err
		}
		l.parsed[name] = t
	}
	l.mu.Unlock()
	return t.ExecuteTemplate(w, "layout", v)
}

func parseTemplate(name, file string) (*template.Template, error) {
	t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", file)
	if err != nil {
		return nil, fmt.Errorf("web: template %s: %w", file, err)
	}
	return t, nil
}
