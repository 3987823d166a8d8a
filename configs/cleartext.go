package configs

import (
	"reflect"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// ClearSecret is a secret written into the configuration file itself rather than taken from
// the environment with ${VAR}.
type ClearSecret struct {
	Path string // key path, e.g. providers.openai.apiKey
	Line int    // line in the file
}

// ClearSecrets returns the secret keys (the ones Secrets reads: apiKey, botToken, appSecret...)
// whose value in data, the file as written, holds text of its own: a value that is only
// ${VAR} references is fine, a literal or a ${VAR:-default} with a non-empty default is not.
// data that is not YAML yields nothing (Load reports it).
func ClearSecrets(data []byte) []ClearSecret {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	var out []ClearSecret
	clearSecrets(doc.Content[0], reflect.TypeOf(Config{}), "", false, &out)
	return out
}

// clearSecrets walks node along the configuration type t (so that maxTokens, a number, is no
// secret although its key has "token" in it).
func clearSecrets(node *yaml.Node, t reflect.Type, path string, secret bool, out *[]ClearSecret) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case node.Kind == yaml.ScalarNode && t.Kind() == reflect.String:
		if secret && node.Tag != "!!null" && expand(authScheme.ReplaceAllString(node.Value, ""), func(string) string { return "" }).text != "" {
			*out = append(*out, ClearSecret{Path: path, Line: node.Line})
		}
	case node.Kind == yaml.MappingNode && t.Kind() == reflect.Struct:
		for i := 0; i+1 < len(node.Content); i += 2 {
			key := node.Content[i].Value
			for j := 0; j < t.NumField(); j++ {
				if name := yamlName(t.Field(j)); name == key {
					clearSecrets(node.Content[i+1], t.Field(j).Type, joinPath(path, key), isSecretKey(key), out)
				}
			}
		}
	case node.Kind == yaml.MappingNode && t.Kind() == reflect.Map:
		for i := 0; i+1 < len(node.Content); i += 2 {
			key := node.Content[i].Value // a string map's key may name a secret: mcp env and headers
			keySecret := t.Elem().Kind() == reflect.String && secretName(key)
			clearSecrets(node.Content[i+1], t.Elem(), joinPath(path, key), secret || keySecret, out)
		}
	case node.Kind == yaml.SequenceNode && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
		for _, item := range node.Content {
			clearSecrets(item, t.Elem(), path, secret, out)
		}
	}
}

// authScheme is the scheme word of an Authorization header ("Bearer ${TOKEN}" is no clear secret).
var authScheme = regexp.MustCompile(`^(?i:bearer|basic|token) +`)

// isSecretKey reports whether a yaml key names a secret (apiKey, botToken, webhookSecret...).
func isSecretKey(key string) bool {
	key = strings.ToLower(key)
	for _, w := range secretKeyWords {
		if strings.Contains(key, w) {
			return true
		}
	}
	return false
}
