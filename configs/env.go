package configs

import "strings"

// expansion records one ${VAR} reference that was replaced by the value of VAR,
// so error messages can show the reference instead of the value (which may be a secret).
type expansion struct {
	name  string
	value string
}

// expanded is the result of expanding a string.
type expanded struct {
	text  string
	unset []string    // names referenced as ${NAME} without a default and unset or empty
	used  []expansion // references replaced by a non-empty value from the environment
}

// expand replaces ${VAR} and ${VAR:-default} with values from env and $$ with a literal $.
// ${VAR:-default} uses default when VAR is unset or empty; the default may itself contain
// references. ${VAR} with VAR unset or empty becomes "" and VAR is listed in unset.
// Anything else (a lone $, $VAR, an unterminated ${ or an invalid name) is kept as written.
func expand(s string, env func(string) string) expanded {
	var out expanded
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			b.WriteByte(c)
			i++
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i += 2
			continue
		case '{':
			end := closingBrace(s, i+2)
			if end < 0 {
				break
			}
			if v, ok := expandRef(s[i+2:end], env, &out); ok {
				b.WriteString(v)
				i = end + 1
				continue
			}
		}
		b.WriteByte(c)
		i++
	}
	out.text = b.String()
	return out
}

// expandRef expands the inside of one ${...}: NAME or NAME:-default.
func expandRef(ref string, env func(string) string, out *expanded) (string, bool) {
	name, def, hasDefault := strings.Cut(ref, ":-")
	if !validEnvName(name) {
		return "", false
	}
	if v := env(name); v != "" {
		out.used = append(out.used, expansion{name: name, value: v})
		return v, true
	}
	if !hasDefault {
		out.unset = append(out.unset, name)
		return "", true
	}
	inner := expand(def, env)
	out.unset = append(out.unset, inner.unset...)
	out.used = append(out.used, inner.used...)
	return inner.text, true
}

// closingBrace returns the index of the '}' closing a reference whose body starts at
// start, counting nested ${...} in defaults, or -1 when there is none on the same line.
func closingBrace(s string, start int) int {
	depth := 0
	for j := start; j < len(s); j++ {
		switch s[j] {
		case '\n':
			return -1
		case '{':
			if j > 0 && s[j-1] == '$' {
				depth++
			}
		case '}':
			if depth == 0 {
				return j
			}
			depth--
		}
	}
	return -1
}

func validEnvName(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
