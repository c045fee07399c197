package main

import (
	"errors"

	"github.com/gortapi/gortapi/rtapi"
)

// exitCode is 2 for bad usage (a setting rtapi or this program refuses
// as invalid), 1 for any other failure.
func exitCode(err error) int {
	if errors.Is(err, rtapi.ErrInvalid) {
		return 2
	}
	return 1
}
