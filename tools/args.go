package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
)

// DecodeArgs decodes a model's raw JSON arguments into v (a pointer, usually to a struct) strictly:
// empty or blank raw counts as {}, unknown fields and trailing data are refused, and every error
// is a short sentence the model can act on.
func DecodeArgs(raw []byte, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	if !json.Valid(raw) {
		// Decode once more to learn what is wrong and where.
		var probe any
		dec := json.NewDecoder(bytes.NewReader(raw))
		err := dec.Decode(&probe)
		if err == nil {
			return errors.New("arguments have trailing data after the JSON object; send exactly one object")
		}
		return syntaxError(err)
	}
	if raw[0] != '{' && !bytes.Equal(raw, []byte("null")) {
		return errors.New("arguments must be a JSON object, like {\"name\": value}")
	}
	if accepted, ok := fieldNames(v); ok {
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(raw, &keys); err == nil {
			if err := checkKeys(keys, accepted); err != nil {
				return err
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("arguments have trailing data after the JSON object; send exactly one object")
	}
	return nil
}

func syntaxError(err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("arguments are not valid JSON: %s (at byte %d)", se.Error(), se.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errors.New("arguments are not valid JSON: unexpected end of input")
	default:
		return fmt.Errorf("arguments are not valid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
}

func decodeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return fmt.Errorf("arguments must be a JSON object, not a %s", te.Value)
		}
		return fmt.Errorf("argument %q must be %s, not %s", te.Field, jsonKind(te.Type), te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) {
		return syntaxError(err)
	}
	return fmt.Errorf("arguments: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// jsonKind names a Go type the way a JSON Schema would.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	default:
		return "a " + t.String()
	}
}

func checkKeys(keys map[string]json.RawMessage, accepted []string) error {
	var unknown []string
	for k := range keys {
		if !acceptsKey(accepted, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	noun := "argument"
	if len(unknown) > 1 {
		noun = "arguments"
	}
	return fmt.Errorf("unknown %s %s; accepted: %s", noun, quoteAll(unknown), strings.Join(accepted, ", "))
}

// acceptsKey matches keys like encoding/json does: exactly, else case-insensitively.
func acceptsKey(accepted []string, k string) bool {
	for _, a := range accepted {
		if strings.EqualFold(a, k) {
			return true
		}
	}
	return false
}

func quoteAll(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}

// fieldNames lists the JSON names of v's struct fields (following embedded structs), sorted.
// ok is false when v is not a pointer to a struct.
func fieldNames(v any) (names []string, ok bool) {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	names = collectFields(t.Elem(), nil)
	sort.Strings(names)
	return names, true
}

func collectFields(t reflect.Type, names []string) []string {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				names = collectFields(ft, names)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
	}
	return names
}
