//go:build linux

package shm

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
)

// A second instance that creates the same segment exclusively is refused
// with an error naming the running first one: before, it got a bare
// "already exists" (and rtapi's ShmNew attached silently, giving two
// writers on one single-writer segment).
func TestCreateTwiceNamesTheRunningCreator(t *testing.T) {
	if rttest.ChildRole() == "second" {
		_, err := Create(devShm(), 63, 4096)
		var ee *ExistError
		if !errors.As(err, &ee) || !errors.Is(err, os.ErrExist) {
			fmt.Fprintln(os.Stderr, "second Create:", err)
			os.Exit(2)
		}
		fmt.Print(err.Error())
		os.Exit(0)
	}
	s, err := Create(devShm(), 63, 4096)
	require.NoError(t, err)
	defer s.Delete()
	cmd := child(t, "TestCreateTwiceNamesTheRunningCreator", "second")
	cmd.Stderr = nil
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child: %s", out)
	assert.Contains(t, string(out), "created by pid "+strconv.Itoa(os.Getpid())+", which is running")

	// A segment whose creator is gone says so, and how to clear it.
	_, err = Create(devShm(), 63, 4096)
	var ee *ExistError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, os.Getpid(), ee.CreatorPID)
	gone := &ExistError{Name: ee.Name, Path: ee.Path, CreatorPID: 4_000_001}
	assert.Contains(t, gone.Error(), "which is gone")
}
