package duration

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUnmarshal(t *testing.T) {
	for in, want := range map[string]time.Duration{
		`"5s"`: 5 * time.Second, `"1h30m"`: 90 * time.Minute, `5000000000`: 5 * time.Second, `0`: 0, `"-1s"`: -time.Second,
		`"1d"`: 24 * time.Hour, `"1.5d12h"`: 48 * time.Hour, `"-2d"`: -48 * time.Hour, `".5d"`: 12 * time.Hour,
	} {
		var d Duration
		require.NoError(t, json.Unmarshal([]byte(in), &d), in)
		assert.Equal(t, want, d.D(), in)
		out, err := json.Marshal(d)
		require.NoError(t, err)
		var back Duration
		require.NoError(t, json.Unmarshal(out, &back))
		assert.Equal(t, d, back, "round trip of %s", in)
	}
}

func TestUnmarshalBadInput(t *testing.T) {
	for in, msg := range map[string]string{
		`"5"`:    `invalid duration "5"`,
		`"soon"`: `invalid duration "soon"`,
		`"d"`:    `invalid duration "d"`,
		`"1dd"`:  `invalid duration "1dd"`,
		`"1d5"`:  `invalid duration "1d5"`,
		`1.5`:    `a duration is a string such as "30s" or an integer of nanoseconds, not 1.5`,
		`true`:   `a duration is a string such as "30s" or an integer of nanoseconds, not true`,
		`"5s`:    "unexpected end of JSON input",
	} {
		var d Duration
		err := json.Unmarshal([]byte(in), &d)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), msg, in)
	}
}

func TestCheckNonNegative(t *testing.T) {
	type inner struct {
		Timeout Duration `json:"timeout,omitempty"`
	}
	type cfg struct {
		MaxAge  Duration         `json:"max_age"`
		Remote  *inner           `json:"remote"`
		List    []inner          `json:"list"`
		ByName  map[string]inner `json:"by_name"`
		private Duration         //nolint:unused // not config
		Other   string           `json:"other"`
		Plain   time.Duration    `json:"plain"` // not this type: not checked
		Skipped Duration         `json:"-"`
		Nested  struct{ D Duration }
	}
	ok := cfg{MaxAge: Duration(time.Minute), Remote: &inner{}, private: -1, Plain: -1, Skipped: -1}
	require.NoError(t, CheckNonNegative("c", ok))
	require.NoError(t, CheckNonNegative("c", &ok))
	require.NoError(t, CheckNonNegative("c", nil))
	for want, bad := range map[string]cfg{
		"c.max_age: -5s is negative":             {MaxAge: Duration(-5 * time.Second)},
		"c.remote.timeout: -1h0m0s is negative":  {Remote: &inner{Timeout: Duration(-time.Hour)}},
		"c.list[1].timeout: -1ns is negative":    {List: []inner{{}, {Timeout: -1}}},
		"c.by_name[x].timeout: -1ns is negative": {ByName: map[string]inner{"x": {Timeout: -1}}},
		"c.Nested.D: -1ns is negative":           {Nested: struct{ D Duration }{-1}},
	} {
		err := CheckNonNegative("c", &bad)
		require.Error(t, err, want)
		assert.Equal(t, want, err.Error())
	}
}
