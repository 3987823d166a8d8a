package telegram

import (
	"regexp"
	"strings"
	"testing"
)

func TestShapesMatchRegexps(t *testing.T) {
	tok := regexp.MustCompile(`^\d+:[\w-]{35}$`)
	sec := regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)
	cases := []string{"", ":", "1:", "123456:AAHfakeTokenForReefTestsOnly_abcdef", "123456:AAHfakeTokenForReefTestsOnly_abcde", "a23:AAHfakeTokenForReefTestsOnly_abcdef",
		"123456:AAHfakeTokenForReefTestsOnly_abcdé", "123456:AAHfakeTokenForReefTestsOnly abcdef", ":AAHfakeTokenForReefTestsOnly_abcdef", "12:34:AAHfakeTokenForReefTestsOnly_abc",
		"x", strings.Repeat("a", 256), strings.Repeat("a", 257), "a-b_C9", "a b", "é", "123456:AAHfakeTokenForReefTestsOnly_abcdef\n"}
	for _, c := range cases {
		if tokenShaped(c) != tok.MatchString(c) {
			t.Errorf("tokenShaped(%q) = %v", c, tokenShaped(c))
		}
		if secretShaped(c) != sec.MatchString(c) {
			t.Errorf("secretShaped(%q) = %v", c, secretShaped(c))
		}
	}
}
