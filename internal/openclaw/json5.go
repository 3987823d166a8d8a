package openclaw

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DecodeJSON5 decodes a JSON5 document (OpenClaw's config format: comments, trailing commas,
// unquoted keys, single-quoted strings, hex numbers) into v, by rewriting it as JSON first.
func DecodeJSON5(data []byte, v any) error {
	js, err := JSON5ToJSON(data)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("json5: %w", err)
	}
	return nil
}

// JSON5ToJSON rewrites a JSON5 document as plain JSON. Errors name the line.
func JSON5ToJSON(data []byte) ([]byte, error) {
	c := &json5conv{src: data, line: 1}
	if err := c.run(); err != nil {
		return nil, err
	}
	return c.out.Bytes(), nil
}

type json5conv struct {
	src  []byte
	pos  int
	line int
	out  bytes.Buffer
}

func (c *json5conv) errf(format string, args ...any) error {
	return fmt.Errorf("json5: line %d: %s", c.line, fmt.Sprintf(format, args...))
}

func (c *json5conv) run() error {
	for c.pos < len(c.src) {
		b := c.src[c.pos]
		switch {
		case b == '\n':
			c.line++
			c.out.WriteByte(b)
			c.pos++
		case b == '/' && c.pos+1 < len(c.src) && (c.src[c.pos+1] == '/' || c.src[c.pos+1] == '*'):
			if err := c.comment(); err != nil {
				return err
			}
		case b == '"' || b == '\'':
			if err := c.str(b); err != nil {
				return err
			}
		case b == ',':
			if c.trailingComma() {
				c.pos++ // drop it
				continue
			}
			c.out.WriteByte(b)
			c.pos++
		case b == '+' || b == '.' || (b >= '0' && b <= '9') || b == '-':
			if err := c.number(); err != nil {
				return err
			}
		case b == '_' || b == '$' || b >= utf8.RuneSelf || unicode.IsLetter(rune(b)):
			if err := c.ident(); err != nil {
				return err
			}
		default:
			c.out.WriteByte(b)
			c.pos++
		}
	}
	return nil
}

// comment skips a // or /* */ comment, keeping its newlines so line numbers hold.
func (c *json5conv) comment() error {
	if c.src[c.pos+1] == '/' {
		for c.pos < len(c.src) && c.src[c.pos] != '\n' {
			c.pos++
		}
		return nil
	}
	end := bytes.Index(c.src[c.pos+2:], []byte("*/"))
	if end < 0 {
		return c.errf("unterminated /* comment")
	}
	body := c.src[c.pos : c.pos+2+end+2]
	for range bytes.Count(body, []byte("\n")) {
		c.out.WriteByte('\n')
		c.line++
	}
	c.pos += len(body)
	return nil
}

// trailingComma reports whether the comma at pos is followed (past blanks and comments)
// by a closing bracket.
func (c *json5conv) trailingComma() bool {
	i := c.pos + 1
	for i < len(c.src) {
		switch b := c.src[i]; {
		case b == ' ' || b == '\t' || b == '\r' || b == '\n':
			i++
		case b == '/' && i+1 < len(c.src) && c.src[i+1] == '/':
			for i < len(c.src) && c.src[i] != '\n' {
				i++
			}
		case b == '/' && i+1 < len(c.src) && c.src[i+1] == '*':
			end := bytes.Index(c.src[i+2:], []byte("*/"))
			if end < 0 {
				return false
			}
			i += 2 + end + 2
		default:
			return b == '}' || b == ']'
		}
	}
	return false
}

// str copies a string literal as a JSON string.
func (c *json5conv) str(quote byte) error {
	var sb strings.Builder
	c.pos++
	for {
		if c.pos >= len(c.src) {
			return c.errf("unterminated string")
		}
		b := c.src[c.pos]
		switch {
		case b == quote:
			c.pos++
			q, _ := json.Marshal(sb.String())
			c.out.Write(q)
			return nil
		case b == '\n':
			return c.errf("newline in a string (end the line with \\ to continue it)")
		case b == '\\':
			if c.pos+1 >= len(c.src) {
				return c.errf("unterminated string")
			}
			n, err := c.escape(&sb)
			if err != nil {
				return err
			}
			c.pos += n
		default:
			r, size := utf8.DecodeRune(c.src[c.pos:])
			sb.WriteRune(r)
			c.pos += size
		}
	}
}

// escape decodes the escape sequence at pos into sb and returns its length.
func (c *json5conv) escape(sb *strings.Builder) (int, error) {
	e := c.src[c.pos+1]
	simple := map[byte]string{'n': "\n", 't': "\t", 'r': "\r", 'b': "\b", 'f': "\f", 'v': "\v",
		'0': "\x00", '\\': "\\", '/': "/", '"': "\"", '\'': "'"}
	switch {
	case e == '\n':
		c.line++
		return 2, nil
	case e == '\r':
		if c.pos+2 < len(c.src) && c.src[c.pos+2] == '\n' {
			c.line++
			return 3, nil
		}
		return 2, nil
	case e == 'u' || e == 'x':
		digits := 4
		if e == 'x' {
			digits = 2
		}
		if c.pos+2+digits > len(c.src) {
			return 0, c.errf("short \\%c escape", e)
		}
		n, err := strconv.ParseUint(string(c.src[c.pos+2:c.pos+2+digits]), 16, 32)
		if err != nil {
			return 0, c.errf("bad \\%c escape", e)
		}
		r := rune(n)
		size := 2 + digits
		if utf16High(r) && c.pos+size+6 <= len(c.src) && c.src[c.pos+size] == '\\' && c.src[c.pos+size+1] == 'u' {
			if lo, err := strconv.ParseUint(string(c.src[c.pos+size+2:c.pos+size+6]), 16, 32); err == nil {
				r = (r-0xD800)<<10 + (rune(lo) - 0xDC00) + 0x10000
				size += 6
			}
		}
		sb.WriteRune(r)
		return size, nil
	}
	if s, ok := simple[e]; ok {
		sb.WriteString(s)
		return 2, nil
	}
	sb.WriteByte(e) // JSON5: any other escaped character is itself
	return 2, nil
}

func utf16High(r rune) bool { return r >= 0xD800 && r < 0xDC00 }

// number copies a number, rewriting JSON5's forms (hex, a leading +, a bare leading or
// trailing decimal point) as JSON.
func (c *json5conv) number() error {
	start := c.pos
	for c.pos < len(c.src) && strings.IndexByte("+-.0123456789abcdefABCDEFxXInfinityNa", c.src[c.pos]) >= 0 {
		c.pos++
	}
	lit := string(c.src[start:c.pos])
	sign := ""
	body := lit
	if body != "" && (body[0] == '+' || body[0] == '-') {
		if body[0] == '-' {
			sign = "-"
		}
		body = body[1:]
	}
	switch {
	case strings.HasPrefix(body, "0x") || strings.HasPrefix(body, "0X"):
		n, err := strconv.ParseUint(body[2:], 16, 64)
		if err != nil {
			return c.errf("bad hex number %q", lit)
		}
		c.out.WriteString(sign + strconv.FormatUint(n, 10))
		return nil
	case body == "Infinity" || body == "NaN":
		return c.errf("%s has no JSON equivalent", lit)
	}
	if strings.HasPrefix(body, ".") {
		body = "0" + body
	}
	if strings.HasSuffix(body, ".") {
		body += "0"
	}
	body = strings.Replace(body, ".e", ".0e", 1)
	if _, err := strconv.ParseFloat(body, 64); err != nil {
		return c.errf("bad number %q", lit)
	}
	c.out.WriteString(sign + body)
	return nil
}

// ident copies true, false and null, and quotes an unquoted object key.
func (c *json5conv) ident() error {
	start := c.pos
	for c.pos < len(c.src) {
		r, size := utf8.DecodeRune(c.src[c.pos:])
		if r != '_' && r != '$' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			break
		}
		c.pos += size
	}
	word := string(c.src[start:c.pos])
	switch word {
	case "true", "false", "null":
		c.out.WriteString(word)
		return nil
	case "Infinity", "NaN":
		return c.errf("%s has no JSON equivalent", word)
	}
	q, _ := json.Marshal(word)
	c.out.Write(q)
	return nil
}
