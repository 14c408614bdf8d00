package main

import (
	"strings"
	_ "unsafe" // for go:linkname

	"github.com/caddyserver/caddy/v2/caddyconfig"
)

// configAdapters is caddyconfig's registry of config adapters. Caddy's
// Caddyfile adapter warns about an unformatted file with "run 'caddy fmt
// --overwrite'", naming a binary a lakegate user does not have, and Caddy
// offers no way to replace a registered adapter: the binary swaps the
// entry for one that names itself. Should Caddy rename the registry, the
// build fails to link, not silently.
//
//go:linkname configAdapters github.com/caddyserver/caddy/v2/caddyconfig.configAdapters
var configAdapters map[string]caddyconfig.Adapter

// Package main's init runs after every package it imports, the Caddyfile
// adapter's registration included.
func init() {
	if a := configAdapters["caddyfile"]; a != nil {
		configAdapters["caddyfile"] = ownFmtHint{a}
	}
}

// ownFmtHint is the Caddyfile adapter with its `caddy fmt` hint naming
// lakegate's own fmt command (Caddy's, under lakegate's name).
type ownFmtHint struct{ caddyconfig.Adapter }

func (a ownFmtHint) Adapt(body []byte, options map[string]any) ([]byte, []caddyconfig.Warning, error) {
	out, warnings, err := a.Adapter.Adapt(body, options)
	for i := range warnings {
		warnings[i].Message = strings.ReplaceAll(warnings[i].Message, "'caddy fmt ", "'lakegate fmt ")
	}
	return out, warnings, err
}
