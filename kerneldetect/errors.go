package kerneldetect

import (
	"errors"

	"github.com/gortapi/gortapi/internal/errs"
)

// ErrInvalid is returned for misuse of the package: a nil fs.FS, an
// unknown Kind or Status name. Test with errors.Is. It is rtapi.ErrInvalid.
var ErrInvalid = errs.Invalid

// errTooLarge marks a file longer than the reader's cap; its content is
// reported truncated.
var errTooLarge = errors.New("file larger than read cap")
