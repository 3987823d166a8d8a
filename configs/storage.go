package configs

import (
	"net/url"
	"strings"
)

// Storage drivers.
const (
	StorageBbolt    = "bbolt"    // one file in the data directory (the default)
	StoragePostgres = "postgres" // a PostgreSQL database: cluster mode (docs/scaling.md)
)

// StorageConfig says where reef keeps its state.
type StorageConfig struct {
	Driver string `yaml:"driver"` // bbolt (default; "" too) | postgres
	URL    string `yaml:"url"`    // postgres: postgres://user:password@host:5432/db; usually ${REEF_DATABASE_URL}
}

// Postgres reports whether the state lives in PostgreSQL.
func (s StorageConfig) Postgres() bool { return s.Driver == StoragePostgres }

// secrets returns the URL's password, and the URL itself when it has one, for redaction.
func (s StorageConfig) secrets() []string {
	u, err := url.Parse(s.URL)
	if err != nil {
		if s.URL != "" {
			return []string{s.URL} // unparsable: keep it all out of logs
		}
		return nil
	}
	var out []string
	if p, ok := u.User.Password(); ok && p != "" {
		out = append(out, p, s.URL)
	}
	// key=value form: password=...
	for _, f := range strings.Fields(s.URL) {
		if v, ok := strings.CutPrefix(f, "password="); ok && v != "" {
			out = append(out, strings.Trim(v, "'"), s.URL)
		}
	}
	return out
}

func (c *Config) validateStorage(v *validator) {
	v.oneOf("storage.driver", c.Storage.Driver, []string{"", StorageBbolt, StoragePostgres})
	if c.Storage.Postgres() && strings.TrimSpace(c.Storage.URL) == "" {
		v.addf("storage.url: the postgres driver needs the database's URL (postgres://user:password@host:5432/db): " +
			"set REEF_DATABASE_URL, or storage.url")
	}
}
