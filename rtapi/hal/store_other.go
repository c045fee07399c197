//go:build !amd64 || race

package hal

import "sync/atomic"

// storeRelaxed stores v at p atomically: where a plain store is not
// known to be whole and ordered (32-bit platforms among others), and
// under the race detector. See store_amd64.go.
// RT-safe.
func storeRelaxed(p *uint64, v uint64) { atomic.StoreUint64(p, v) }
