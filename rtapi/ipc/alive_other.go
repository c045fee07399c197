//go:build !unix

package ipc

// alive cannot tell where there is no kill(pid, 0): every owner with a
// positive pid counts as alive, so a dead owner's lock is never taken over
// here. Segments, the only place a lock can outlive its process, do not
// exist here anyway.
func alive(pid uint32) bool { return int32(pid) > 0 }
