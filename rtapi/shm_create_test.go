package rtapi_test

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/rttest"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/shm"
)

// ShmCreate refuses a key in use, whatever its size, with an error naming
// the creator: a second host cannot become a second writer of a segment.
func TestShmCreateIsExclusive(t *testing.T) {
	rt := rttest.Open(t, func() (*rtapi.RT, error) {
		return rtapi.Open(rtapi.Options{Flavor: "posix", Instance: 900000 + os.Getpid()})
	})
	s, err := rt.ShmCreate(7, 4096)
	require.NoError(t, err)
	defer s.Delete()
	for _, size := range []int{4096, 64} {
		_, err = rt.ShmCreate(7, size)
		require.ErrorIs(t, err, rtapi.ErrExist)
		var ee *shm.ExistError
		require.True(t, errors.As(err, &ee), "%v", err)
		assert.Equal(t, os.Getpid(), ee.CreatorPID)
		assert.True(t, ee.Running)
	}
}
