package guard

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sharedPage makes the page of cycle counters: mapped here, and a file
// for the guard's descriptor 3.
func sharedPage() ([]byte, *os.File, error) {
	fd, err := unix.MemfdCreate("gortapi-guard", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, nil, os.NewSyscallError("memfd_create", err)
	}
	f := os.NewFile(uintptr(fd), "gortapi-guard")
	if err := f.Truncate(PageSize); err != nil {
		f.Close()
		return nil, nil, err
	}
	page, err := unix.Mmap(fd, 0, PageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, nil, os.NewSyscallError("mmap", err)
	}
	return page, f, nil
}

// slotsOf views a mapped page as slots.
func slotsOf(page []byte) []Slot {
	return unsafe.Slice((*Slot)(unsafe.Pointer(&page[0])), len(page)/int(unsafe.Sizeof(Slot{})))
}
