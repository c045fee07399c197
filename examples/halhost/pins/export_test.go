package pins

import "github.com/gortapi/gortapi/rtapi/ipc"

// RaceEveryRead makes every copy Read makes lose its race with a writer: the
// copy is real, then a Write lands before the sequence is checked again. It
// returns a counter of the copies made, and undoes itself when t ends.
func RaceEveryRead(t interface{ Cleanup(func()) }) *int {
	copies := new(int)
	t.Cleanup(func() { tryReadFrame = (*ipc.Seqlock[Frame]).TryRead })
	tryReadFrame = func(s *ipc.Seqlock[Frame], f *Frame) (uint64, bool) {
		*copies++
		seq, _ := s.TryRead(f)
		s.Write(f) // the writer's Write, completed during the copy
		return seq, seq == s.Seq()
	}
	return copies
}

// MaxReadTries is the bound on Read's copies.
const MaxReadTries = maxReadTries
