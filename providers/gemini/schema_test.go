package gemini_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reefgw/reef/providers/gemini"
)

func TestCleanSchema(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // "" means nil
	}{
		{"empty", ``, ``},
		{"invalid", `{not json`, ``},
		{"no properties", `{"type":"object","additionalProperties":false}`, ``},
		{
			"nested objects and arrays",
			`{"type":"object","properties":{"files":{"type":"array","items":{"type":"object","additionalProperties":false,
				"properties":{"path":{"type":"string","format":"uri"},"mode":{"type":"string","enum":["r","w"],"default":"r"}}}}}}`,
			`{"type":"object","properties":{"files":{"type":"array","items":{"type":"object",
				"properties":{"path":{"type":"string"},"mode":{"type":"string","enum":["r","w"]}}}}}}`,
		},
		{
			"refs are inlined",
			`{"type":"object","$defs":{"when":{"type":"string","format":"date-time"}},"properties":{"at":{"$ref":"#/$defs/when"}}}`,
			`{"type":"object","properties":{"at":{"type":"string","format":"date-time"}}}`,
		},
		{
			"recursive ref is bounded",
			`{"type":"object","$defs":{"node":{"type":"object","properties":{"child":{"$ref":"#/$defs/node"}}}},"properties":{"root":{"$ref":"#/$defs/node"}}}`,
			``, // checked below for termination only
		},
		{
			"anyOf with null becomes nullable",
			`{"type":"object","properties":{"n":{"anyOf":[{"type":"integer"},{"type":"null"}],"description":"count"}}}`,
			`{"type":"object","properties":{"n":{"type":"integer","nullable":true,"description":"count"}}}`,
		},
		{
			"oneOf becomes anyOf",
			`{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"integer","format":"int64"}]}}}`,
			`{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"integer","format":"int64"}]}}}`,
		},
		{
			"const, integer enum, array without items, untyped",
			`{"type":"object","properties":{"k":{"const":"fixed"},"level":{"type":"integer","enum":[1,2]},"tags":{"type":"array"},"any":{}}}`,
			`{"type":"object","properties":{"k":{"type":"string","enum":["fixed"]},"level":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}},"any":{"type":"string"}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := gemini.CleanSchema(json.RawMessage(tt.in))
			if tt.name == "recursive ref is bounded" {
				if got == nil {
					t.Fatal("got nil, want a schema")
				}
				return
			}
			var want map[string]any
			if tt.want != "" {
				if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("CleanSchema (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCleanSchemaKeepsOnlyKnownKeywords walks the output of a schema full of unsupported
// keywords and fails on any keyword Gemini does not accept.
func TestCleanSchemaKeepsOnlyKnownKeywords(t *testing.T) {
	in := `{"$schema":"x","$id":"y","title":"t","type":"object","additionalProperties":{"type":"string"},
		"patternProperties":{"^x":{}},"examples":[{}],"default":{},
		"properties":{"a":{"type":"string","minLength":1,"deprecated":true,"readOnly":true,"$comment":"c",
		"contentEncoding":"base64"},"b":{"type":"array","items":{"type":"number","exclusiveMinimum":0,"multipleOf":2},
		"uniqueItems":true,"contains":{}},"c":{"allOf":[{"type":"object","properties":{"d":{"type":"boolean"}}}],"not":{}}}}`
	allowed := map[string]bool{"type": true, "format": true, "description": true, "nullable": true, "enum": true,
		"items": true, "properties": true, "required": true, "anyOf": true, "minItems": true, "maxItems": true,
		"minimum": true, "maximum": true, "minLength": true, "maxLength": true, "pattern": true,
		"minProperties": true, "maxProperties": true}
	var walk func(path string, s map[string]any)
	walk = func(path string, s map[string]any) {
		if s["type"] == nil && s["anyOf"] == nil {
			t.Errorf("%s: no type", path)
		}
		for k, v := range s {
			if !allowed[k] {
				t.Errorf("%s: kept keyword %q", path, k)
			}
			switch k {
			case "properties":
				for name, p := range v.(map[string]any) {
					walk(path+"."+name, p.(map[string]any))
				}
			case "items":
				walk(path+"[]", v.(map[string]any))
			case "anyOf":
				for _, p := range v.([]any) {
					walk(path+"|", p.(map[string]any))
				}
			}
		}
	}
	got := gemini.CleanSchema(json.RawMessage(in))
	if got == nil {
		t.Fatal("got nil")
	}
	walk("$", got)
	d := got["properties"].(map[string]any)["c"].(map[string]any)
	if d["type"] != "object" || d["properties"] == nil {
		t.Errorf("got %v, want the single allOf element inlined", d)
	}
}
