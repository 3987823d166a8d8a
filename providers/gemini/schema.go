package gemini

import (
	"encoding/json"
	"slices"
	"strings"
)

// Gemini's function parameters take an OpenAPI-style subset of JSON Schema and refuse the
// request on anything else ($schema, additionalProperties, default, examples, $ref, const,
// oneOf, type arrays, "null" types, unknown formats, properties without a type, arrays
// without items, empty object properties). CleanSchema rewrites a tool's JSON Schema into
// that subset, keeping the meaning where it can:
//
//   - local $ref (#/$defs/x, #/definitions/x) are inlined (to a bounded depth);
//   - type ["string","null"] and anyOf [{...},{"type":"null"}] become nullable;
//   - oneOf becomes anyOf; a single-element anyOf or allOf is inlined;
//   - const becomes a one-value enum; enums on non-string types are dropped;
//   - formats Gemini does not know are dropped.

// keep lists the scalar keywords copied unchanged.
var keep = []string{"description", "nullable", "minItems", "maxItems", "minimum", "maximum",
	"minLength", "maxLength", "pattern", "minProperties", "maxProperties"}

// formats lists the formats Gemini accepts, by type.
var formats = map[string][]string{
	"string":  {"enum", "date-time"},
	"integer": {"int32", "int64"},
	"number":  {"float", "double"},
}

const maxRefDepth = 8

// CleanSchema returns the Gemini form of a JSON Schema object, or nil when the schema is
// empty, invalid, or describes an object without properties (Gemini wants parameters left
// out then).
func CleanSchema(raw json.RawMessage) map[string]any {
	var root map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &root) != nil {
		return nil
	}
	defs := map[string]any{}
	for _, k := range []string{"$defs", "definitions"} {
		if d, ok := root[k].(map[string]any); ok {
			for name, v := range d {
				defs["#/"+k+"/"+name] = v
			}
		}
	}
	out := clean(root, defs, 0)
	if props, _ := out["properties"].(map[string]any); len(props) == 0 {
		return nil
	}
	return out
}

func clean(s map[string]any, defs map[string]any, depth int) map[string]any {
	if ref, ok := s["$ref"].(string); ok {
		target, _ := defs[ref].(map[string]any)
		if target == nil || depth >= maxRefDepth {
			return map[string]any{"type": "object", "description": describe(s, "(recursive or unresolved reference)")}
		}
		return clean(target, defs, depth+1)
	}
	out := map[string]any{}
	for _, k := range keep {
		if v, ok := s[k]; ok {
			out[k] = v
		}
	}
	typ, nullable := schemaType(s["type"])
	if nullable {
		out["nullable"] = true
	}
	variants := variantsOf(s, defs, depth)
	for _, v := range variants {
		if t, _ := v["type"].(string); t == "null" {
			out["nullable"] = true
		}
	}
	variants = slices.DeleteFunc(variants, func(v map[string]any) bool { return v["type"] == "null" })
	switch {
	case len(variants) == 1 && typ == "":
		for k, v := range variants[0] { // inline: the outer keywords win
			if _, set := out[k]; !set {
				out[k] = v
			}
		}
		typ, _ = out["type"].(string)
	case len(variants) > 1:
		anyOf := make([]any, len(variants))
		for i, v := range variants {
			anyOf[i] = v
		}
		out["anyOf"] = anyOf
	}
	if props, ok := s["properties"].(map[string]any); ok {
		cleaned := map[string]any{}
		for name, p := range props {
			if pm, ok := p.(map[string]any); ok {
				cleaned[name] = clean(pm, defs, depth)
			} else {
				cleaned[name] = map[string]any{"type": "string"} // boolean schema `true`
			}
		}
		if len(cleaned) > 0 {
			out["properties"] = cleaned
			if req := requiredIn(s["required"], cleaned); len(req) > 0 {
				out["required"] = req
			}
		}
	}
	if items := itemsOf(s["items"]); items != nil {
		out["items"] = clean(items, defs, depth)
	}
	if typ == "" && out["anyOf"] == nil {
		switch {
		case out["properties"] != nil:
			typ = "object"
		case out["items"] != nil:
			typ = "array"
		default:
			typ = "string"
		}
	}
	if typ != "" {
		out["type"] = typ
	}
	if typ == "array" && out["items"] == nil {
		out["items"] = map[string]any{"type": "string"}
	}
	if f, ok := s["format"].(string); ok && slices.Contains(formats[typ], f) {
		out["format"] = f
	}
	if e := stringEnum(s); e != nil && (typ == "string" || typ == "") {
		out["enum"] = e
	}
	return out
}

// schemaType reads "type", which may be a string or an array including "null".
func schemaType(v any) (typ string, nullable bool) {
	switch t := v.(type) {
	case string:
		if t == "null" {
			return "", true
		}
		return t, false
	case []any:
		for _, x := range t {
			s, _ := x.(string)
			if s == "null" {
				nullable = true
			} else if typ == "" {
				typ = s
			}
		}
	}
	return typ, nullable
}

// variantsOf cleans the anyOf, oneOf and allOf alternatives.
func variantsOf(s map[string]any, defs map[string]any, depth int) []map[string]any {
	var out []map[string]any
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		list, _ := s[k].([]any)
		if k == "allOf" && len(list) != 1 {
			continue // an intersection cannot be expressed; leave it out
		}
		for _, v := range list {
			if m, ok := v.(map[string]any); ok {
				if t, _ := m["type"].(string); t == "null" {
					out = append(out, map[string]any{"type": "null"})
					continue
				}
				out = append(out, clean(m, defs, depth))
			}
		}
	}
	return out
}

func itemsOf(v any) map[string]any {
	switch it := v.(type) {
	case map[string]any:
		return it
	case []any: // tuple form: use the first item's schema
		if len(it) > 0 {
			m, _ := it[0].(map[string]any)
			return m
		}
	}
	return nil
}

// requiredIn keeps the required names that are properties.
func requiredIn(v any, props map[string]any) []any {
	list, _ := v.([]any)
	var out []any
	for _, r := range list {
		if name, ok := r.(string); ok && props[name] != nil {
			out = append(out, name)
		}
	}
	return out
}

// stringEnum returns enum (or const) when every value is a string, else nil.
func stringEnum(s map[string]any) []any {
	vals, _ := s["enum"].([]any)
	if c, ok := s["const"]; ok {
		vals = []any{c}
	}
	if len(vals) == 0 {
		return nil
	}
	for _, v := range vals {
		if _, ok := v.(string); !ok {
			return nil
		}
	}
	return vals
}

func describe(s map[string]any, note string) string {
	d, _ := s["description"].(string)
	return strings.TrimSpace(d + " " + note)
}
