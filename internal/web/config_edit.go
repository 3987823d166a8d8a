package web

import (
	"context"
	"net/http"
)

// ConfigEditor is what the Config page's editor needs of the backend, beside Backend: a
// gateway that reloads its configuration has it (cmd/reef/web_config.go).
type ConfigEditor interface {
	// ConfigSource is reef.yaml as written (${ENV} references as they are), every secret
	// value in it redacted.
	ConfigSource(ctx context.Context) (ConfigEdit, error)
	// EditConfig checks text as the new reef.yaml and says what it would change; with save it
	// also writes it (atomically, keeping a backup of the old file) and applies it as a
	// reload does. A problem is in ConfigEdit.Problems, not the error.
	EditConfig(ctx context.Context, text string, save bool) (ConfigEdit, error)
	// EditSettings is EditConfig of reef.yaml with the form's common settings changed
	// (fields named as ConfigForm's inputs: agent.<i>.model, agent.<i>.heartbeat,
	// provider.<name>.apiKey, account.<id>.streaming|dmPolicy|allowFrom, approvals).
	EditSettings(ctx context.Context, fields map[string]string, save bool) (ConfigEdit, error)
}

// ConfigForm is the form of the common settings, filled with the running values.
type ConfigForm struct {
	Agents    []AgentSetting
	Providers []ProviderSetting
	Accounts  []AccountSetting
	Approvals string
	// The choices of the selects.
	StreamingModes, DMPolicies, ApprovalModes []string
}

// AgentSetting is one agent's model and heartbeat interval ("30m", "off").
type AgentSetting struct {
	Index            int
	ID, Model, Every string
}

// ProviderSetting is a provider's API key as its ${NAME} reference; Literal says the file
// holds the key itself (never shown: the form offers to replace it by a reference).
type ProviderSetting struct {
	Name, APIKey string
	Literal      bool
}

// AccountSetting is one bot account's streaming mode and access.
type AccountSetting struct {
	ID                             string // channels.ID: telegram, telegram:work
	Streaming, DMPolicy, AllowFrom string // AllowFrom comma-separated
}

// ConfigEdit is the editor's page: the text, and what checking or saving it found.
type ConfigEdit struct {
	Path     string   // the file
	YAML     string   // the text in the editor
	Problems []string // why it is refused (nothing was written or applied)
	Changes  []string // what it changes, live ones first ("... (needs a restart)")
	Checked  bool     // Changes are from a check, not yet saved
	Saved    bool     // written and applied
	Applied  []string // what the reload applied
	Restart  []string // what waits for a restart
	Form     ConfigForm
}

func (s *Server) configEditor() (ConfigEditor, bool) {
	e, ok := s.cfg.Backend.(ConfigEditor)
	return e, ok
}

// configEdit is GET /config/edit: reef.yaml in an editor.
func (s *Server) configEdit(w http.ResponseWriter, r *http.Request) {
	e, ok := s.configEditor()
	if !ok {
		jsonError(w, http.StatusNotFound, "this gateway does not edit its configuration")
		return
	}
	c, err := e.ConfigSource(r.Context())
	if err != nil {
		s.backendError(w, err)
		return
	}
	s.render(w, http.StatusOK, "config_edit", "Edit config", c)
}

// configSave is POST /config/edit: action=check shows what the text would change,
// action=save writes and applies it. A refused text comes back in the editor with its
// problems (status 422), unchanged on disk.
func (s *Server) configSave(w http.ResponseWriter, r *http.Request) {
	e, ok := s.configEditor()
	if !ok {
		jsonError(w, http.StatusNotFound, "this gateway does not edit its configuration")
		return
	}
	save := r.FormValue("action") == "save"
	c, err := e.EditConfig(r.Context(), r.FormValue("yaml"), save)
	if err != nil {
		s.backendError(w, err)
		return
	}
	code := http.StatusOK
	if len(c.Problems) > 0 {
		code = http.StatusUnprocessableEntity
	}
	if !wantsHTML(r) {
		writeJSON(w, code, s.redactEdit(c)) // a page is redacted whole by render
		return
	}
	s.render(w, code, "config_edit", "Edit config", c)
}

// configSettings is POST /config/settings: the form of the common settings, checked or
// saved as the editor's text is.
func (s *Server) configSettings(w http.ResponseWriter, r *http.Request) {
	e, ok := s.configEditor()
	if !ok {
		jsonError(w, http.StatusNotFound, "this gateway does not edit its configuration")
		return
	}
	if err := r.ParseForm(); err != nil {
		jsonError(w, http.StatusBadRequest, err.Error())
		return
	}
	fields := map[string]string{}
	for k, v := range r.PostForm {
		if k != "csrf" && k != "action" && len(v) > 0 {
			fields[k] = v[0]
		}
	}
	c, err := e.EditSettings(r.Context(), fields, r.FormValue("action") == "save")
	if err != nil {
		s.backendError(w, err)
		return
	}
	code := http.StatusOK
	if len(c.Problems) > 0 {
		code = http.StatusUnprocessableEntity
	}
	if !wantsHTML(r) {
		writeJSON(w, code, s.redactEdit(c)) // a page is redacted whole by render
		return
	}
	s.render(w, code, "config_edit", "Edit config", c)
}

// redactEdit removes the secrets the server knows from what a script gets.
func (s *Server) redactEdit(c ConfigEdit) ConfigEdit {
	c.YAML = s.pages.red.String(c.YAML)
	for i, p := range c.Problems {
		c.Problems[i] = s.pages.red.String(p)
	}
	return c
}
