//go:build thirdpartytests

// Package thirdparty holds no code reef uses. This file names the packages the tests of the
// modules under internal/third_party import and reef itself does not, so that they are
// requirements of reef's go.mod: a first `go mod download` at the root then fetches
// everything the README's test command needs, and the rest runs offline. The build tag is
// never set, so nothing here is built.
package thirdparty

import (
	_ "github.com/stretchr/testify/assert"
	_ "github.com/stretchr/testify/mock"
)
