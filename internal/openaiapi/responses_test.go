package openaiapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// A response id carries its session; ids reef did not give name none.
func TestResponseIDCarriesSession(t *testing.T) {
	for _, name := range []string{"ann", "n8n.ann@example.com", "r-abc"} {
		if got, ok := responseSession(responseID(name, "XYZ")); !ok || got != name {
			t.Errorf("session of responseID(%q) = %q, %v", name, got, ok)
		}
	}
	for _, id := range []string{"resp_XYZ", "resp_zz_X", "chatcmpl-1", "resp_" + "2e2e" + "_X", ""} {
		if got, ok := responseSession(id); ok {
			t.Errorf("responseSession(%q) = %q, want none", id, got)
		}
	}
}

// Responses API requests: input as a string or items, with function calls and their outputs,
// as the messages the run gets; bad input refused before anything is delivered.
func TestResponsesInput(t *testing.T) {
	srv, g := newTestServer(t, nil)
	send := func(body string, header ...string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/responses", strings.NewReader(body))
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v struct {
			Error struct{ Code string }
			ID    string
		}
		_ = json.NewDecoder(resp.Body).Decode(&v)
		if v.Error.Code != "" {
			return resp.StatusCode, v.Error.Code
		}
		return resp.StatusCode, v.ID
	}
	for _, tt := range []struct {
		name, body string
		status     int
		code       string
	}{
		{"no input", `{"model":"reef/main"}`, 400, "missing_input"},
		{"an empty list", `{"model":"reef/main","input":[]}`, 400, "missing_input"},
		{"an unknown item", `{"model":"reef/main","input":[{"type":"web_search_call"}]}`, 400, "unsupported_input"},
		{"an unknown part", `{"model":"reef/main","input":[{"role":"user","content":[{"type":"input_file","file_id":"f"}]}]}`, 400, "invalid_content"},
		{"previous id without store", `{"model":"reef/main","store":false,"previous_response_id":"resp_x_y","input":"hi"}`, 400, "invalid_previous_response"},
		{"a previous id reef did not give", `{"model":"reef/main","previous_response_id":"resp_nope","input":"hi"}`, 404, "previous_response_not_found"},
		{"json output", `{"model":"reef/main","input":"hi","text":{"format":{"type":"json_object"}}}`, 400, "unsupported_response_format"},
		{"a hosted tool", `{"model":"reef/main","input":"hi","tools":[{"type":"web_search"}]}`, 400, "unsupported_tool"},
	} {
		if status, code := send(tt.body); status != tt.status || code != tt.code {
			t.Errorf("%s: %d %s, want %d %s", tt.name, status, code, tt.status, tt.code)
		}
	}
	if n := len(g.delivered()); n != 0 {
		t.Fatalf("bad requests delivered %d messages", n)
	}
	status, id := send(`{"model":"reef/main","input":"hello"}`)
	first := g.delivered()[0]
	if name, ok := responseSession(id); status != 200 || !ok || first.ChatID != "main/"+name || !strings.HasPrefix(name, "r-") || first.Text != "hello" {
		t.Fatalf("a first response: %d %q, delivered %+v", status, id, first)
	}
	status, _ = send(`{"model":"reef/main","previous_response_id":"` + id + `","input":[{"type":"function_call_output","call_id":"c1","output":"42"}]}`)
	next := g.delivered()[1]
	if status != 200 || next.ChatID != first.ChatID || len(next.ToolResults) != 1 || next.ToolResults[0].Content != "42" || next.ToolResults[0].ToolCallID != "c1" {
		t.Fatalf("continued by previous_response_id: %d, delivered %+v", status, next)
	}
	status, _ = send(`{"model":"reef/main","store":false,"instructions":"Be brief.","input":[
		{"role":"user","content":[{"type":"input_text","text":"look"}]},
		{"type":"function_call","call_id":"c2","name":"lookup","arguments":"{}"},
		{"type":"function_call_output","call_id":"c2","output":"7"}]}`)
	st := g.delivered()[2]
	if status != 200 || !st.Stateless || len(st.Context) != 3 || st.Context[0].Content != "Be brief." || st.Context[2].ToolCalls[0].Name != "lookup" ||
		len(st.ToolResults) != 1 || st.ToolResults[0].ToolName != "lookup" {
		t.Fatalf("stateless: %d, delivered %+v", status, st)
	}
}
