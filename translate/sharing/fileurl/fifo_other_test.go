//go:build !unix

package fileurl

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs on this platform") }
