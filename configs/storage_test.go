package configs

import (
	"slices"
	"strings"
	"testing"
)

func TestValidateStorage(t *testing.T) {
	for _, tc := range []struct {
		storage StorageConfig
		want    string // "" = valid
	}{
		{StorageConfig{}, ""},
		{StorageConfig{Driver: "bbolt"}, ""},
		{StorageConfig{Driver: "postgres", URL: "postgres://reef@db/reef"}, ""},
		{StorageConfig{Driver: "postgres"}, "storage.url: the postgres driver needs"},
		{StorageConfig{Driver: "mysql"}, `storage.driver: "mysql" is not valid: use one of bbolt, postgres`},
	} {
		c := &Config{Storage: tc.storage}
		var v validator
		c.validateStorage(&v)
		var got string
		if len(v.problems) > 0 {
			got = v.problems[0].Error()
		}
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%+v: got %q; want %q", tc.storage, got, tc.want)
		}
	}
}

func TestStoragePasswordIsSecret(t *testing.T) {
	for _, u := range []string{"postgres://reef:pw-s3cret@db:5432/reef", "host=db user=reef password=pw-s3cret dbname=reef"} {
		c := &Config{Storage: StorageConfig{Driver: "postgres", URL: u}}
		if s := c.Secrets(); !slices.Contains(s, "pw-s3cret") || !slices.Contains(s, u) {
			t.Errorf("Secrets() = %q; want the password and the URL of %q", s, u)
		}
	}
}
