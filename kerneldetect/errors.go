package kerneldetect

import "errors"

// ErrInvalid is returned for misuse of the package: a nil fs.FS, an
// unknown Kind or Status name. Test with errors.Is.
var ErrInvalid = errors.New("kerneldetect: invalid argument")

// errTooLarge marks a file longer than the reader's cap; its content is
// reported truncated.
var errTooLarge = errors.New("file larger than read cap")
