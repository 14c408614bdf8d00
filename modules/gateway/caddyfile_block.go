package gateway

import (
	"strconv"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/dustin/go-humanize"

	"github.com/lakegate/lakegate/duration"
)

// The Caddyfile grammar. Every lakegate directive, and every block in
// one, is a block: a table from option name to the setter that reads the
// option's arguments (and its own block, if it has one) into the config.
// An option with one plain value uses a typed setter (str, dur, size,
// integer, on); one with several arguments or a block of its own has a
// small named setter. A block's post-processing that the table cannot
// say (relative paths, a required option) follows its parse.

// setter reads the current option's arguments, the dispenser on the
// option's name, into its destination.
type setter func(d *caddyfile.Dispenser) error

// block is a Caddyfile block's grammar: option name -> setter.
type block map[string]setter

// traceOption, when set (by a test), hears of every block parsed (opt
// "") and of every option set in it, with the block's name as its
// errors give it: the grammar test checks with it that an adapted
// Caddyfile uses every option of every block.
var traceOption func(what string, b block, opt string)

// parse reads the block that opens after the current token (a missing
// block is an empty one), each option by its setter; what names the
// block in errors: unknown embedded option "colour".
func (b block) parse(d *caddyfile.Dispenser, what string) error {
	if traceOption != nil {
		traceOption(what, b, "")
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		opt := d.Val()
		set, ok := b[opt]
		switch {
		case !ok && len(b) == 0:
			return d.Errf("%s takes no options, got %q", what, opt)
		case !ok:
			return d.Errf("unknown %s option %q", what, opt)
		}
		if traceOption != nil {
			traceOption(what, b, opt)
		}
		if err := set(d); err != nil {
			return err
		}
	}
	return nil
}

// choose reads the current option's first argument, a mode, into mode
// and the rest of the option by that mode's setter (the dispenser on the
// mode): auth bearer <token>, auth oauth2 { ... }. want lists the modes
// in errors.
func (b block) choose(d *caddyfile.Dispenser, what, want string, mode *string) error {
	opt := d.Val()
	if !d.NextArg() {
		return argErr(d, opt, "a mode: "+want, 0)
	}
	*mode = d.Val()
	if traceOption != nil {
		traceOption(what, b, "")
	}
	set, ok := b[*mode]
	if !ok {
		return d.Errf("unknown %s %q (want %s)", what, *mode, want)
	}
	if traceOption != nil {
		traceOption(what, b, *mode)
	}
	return set(d)
}

// sub is an option that takes no arguments, only the block b: tls { ... }.
func sub(b block, what string) setter {
	return func(d *caddyfile.Dispenser) error {
		if err := noMoreArgs(d); err != nil {
			return err
		}
		return b.parse(d, what)
	}
}

// str reads the option's one argument. An empty one is kept, unless it
// is an unset {$VAR} without a default (see argNamed).
func str[S ~string](dst *S) setter {
	return func(d *caddyfile.Dispenser) error {
		var s string
		if err := oneArg(d, &s); err != nil {
			return err
		}
		*dst = S(s)
		return nil
	}
}

// dur reads a duration as every Caddy directive does (caddy.ParseDuration:
// Go's syntax plus days, "1d").
func dur(dst *duration.Duration) setter {
	return func(d *caddyfile.Dispenser) error { return durationArg(d, dst) }
}

// size reads a byte size (see sizeArg).
func size[T int | int64](dst *T) setter {
	return func(d *caddyfile.Dispenser) error { return sizeArg(d, dst) }
}

// integer reads a whole number.
func integer(dst *int) setter {
	return func(d *caddyfile.Dispenser) error { return intArg(d, dst) }
}

// on is an option without arguments that sets *dst: required, discover.
func on(dst *bool) setter {
	return func(d *caddyfile.Dispenser) error {
		if err := noMoreArgs(d); err != nil {
			return err
		}
		*dst = true
		return nil
	}
}

// keyValue reads `<option> <key> <value>` into the map *dst, made on
// first use; usage is the option's form in errors.
func keyValue(dst *map[string]string, usage string) setter {
	return func(d *caddyfile.Dispenser) error {
		opt := d.Val()
		var k, v string
		if !d.AllArgs(&k, &v) {
			return argsErr(d, opt, usage)
		}
		if *dst == nil {
			*dst = map[string]string{}
		}
		(*dst)[k] = v
		return nil
	}
}

// bare is an option that takes nothing: auth none.
func bare(d *caddyfile.Dispenser) error { return noMoreArgs(d) }

// oneArg reads exactly one argument into dst. An empty one is kept,
// unless it is an unset {$VAR} without a default (see argNamed).
func oneArg(d *caddyfile.Dispenser, dst *string) error {
	return argNamed(d, dst, "its value")
}

// durationArg reads a duration as every Caddy directive does (Go's syntax
// plus days, "1d") into a duration.Duration, the config type of every
// duration in lakegate's JSON.
func durationArg(d *caddyfile.Dispenser, dst *duration.Duration) error {
	var s string
	if err := oneArg(d, &s); err != nil {
		return err
	}
	v, err := duration.Parse(s)
	if err != nil {
		return d.Errf("%v", err)
	}
	*dst = duration.Duration(v)
	return nil
}

// sizeArg reads one positive byte size (1MiB, 512KB, 4096), at most 2 GiB,
// into dst: every size option of the Caddyfile reads the same way.
func sizeArg[T int | int64](d *caddyfile.Dispenser, dst *T) error {
	opt := d.Val()
	var s string
	if err := oneArg(d, &s); err != nil {
		return err
	}
	n, err := humanize.ParseBytes(s)
	if err != nil || n == 0 || n > 1<<31 {
		return d.Errf("%s: invalid size %q (a positive size up to 2GiB, such as 512KiB or 64MiB)", opt, s)
	}
	*dst = T(n)
	return nil
}

func intArg(d *caddyfile.Dispenser, dst *int) error {
	var s string
	if err := oneArg(d, &s); err != nil {
		return err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return d.Errf("invalid number %q", s)
	}
	*dst = n
	return nil
}

func noMoreArgs(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	return nil
}
