package configs

import (
	"fmt"
	"strings"
	"time"
)

// DefaultBackupKeep is how many automatic backups the gateway keeps by default.
const DefaultBackupKeep = 7

// BackupConfig sets the gateway's automatic backups of the database.
type BackupConfig struct {
	Every string `yaml:"every"` // Go duration ("24h", "6h"); default 24h; "off" or 0 disables
	Keep  int    `yaml:"keep"`  // automatic backups kept in $REEF_HOME/backups; default 7
}

// Interval returns the time between automatic backups: 24h by default, 0 when disabled.
func (b BackupConfig) Interval() (time.Duration, error) {
	switch strings.ToLower(strings.TrimSpace(b.Every)) {
	case "":
		return 24 * time.Hour, nil
	case "off", "0", "never":
		return 0, nil
	}
	d, err := time.ParseDuration(b.Every)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration: write it like 24h or 6h, or off", b.Every)
	}
	if d < time.Second {
		return 0, fmt.Errorf("%s is under one second", d)
	}
	return d, nil
}

func (c *Config) validateBackup(v *validator) {
	if _, err := c.Backup.Interval(); err != nil {
		v.addf("backup.every: %v", err)
	}
	if c.Backup.Keep < 0 {
		v.addf("backup.keep: %d is not a count: use a positive number (default %d)", c.Backup.Keep, DefaultBackupKeep)
	}
}
