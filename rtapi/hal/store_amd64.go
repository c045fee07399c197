//go:build amd64 && !race

package hal

// storeRelaxed stores v at p, an 8-byte aligned word that others read
// with atomic loads, with one plain MOV: on amd64 an aligned 8-byte
// store is atomic and ordered after the thread's earlier stores
// (x86-TSO), and under the Go memory model a read racing with a
// word-sized write observes all of it or none of it. Readers in other
// threads and processes so see each value whole, as LinuxCNC's readers
// see its volatile stores, without the full fence (XCHG) of
// atomic.StoreUint64. What it does not give is a store ordered before
// the thread's later loads (no StoreLoad fence): for values no one
// builds a Dekker-style handshake on, such as pins, parameters and
// .time, which LinuxCNC writes with plain stores too. Under the race
// detector it is atomic.StoreUint64 (store_other.go), which the detector
// understands.
// RT-safe.
func storeRelaxed(p *uint64, v uint64) { *p = v }
