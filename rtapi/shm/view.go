package shm

import (
	"fmt"
	"math"
	"reflect"
	"unsafe"
)

// CheckPointerFree returns nil when values of t can live in shared memory:
// booleans, numbers, and arrays and structs made only of them. Otherwise it
// returns a *FieldError (matching ErrInvalid) that names the first offending
// field, e.g. "Servo.Axes[].Name is a string".
func CheckPointerFree(t reflect.Type) error {
	if t == nil {
		return &FieldError{Type: "<nil>", Kind: "nil type"}
	}
	if kind, field := firstPointer(t, ""); kind != "" {
		return &FieldError{Type: t.String(), Field: field, Kind: kind}
	}
	return nil
}

func firstPointer(t reflect.Type, path string) (kind, field string) {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return "", ""
	case reflect.Array:
		return firstPointer(t.Elem(), path+"[]")
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			p := f.Name
			if path != "" {
				p = path + "." + f.Name
			}
			if k, fp := firstPointer(f.Type, p); k != "" {
				return k, fp
			}
		}
		return "", ""
	case reflect.Uintptr, reflect.UnsafePointer, reflect.Pointer:
		return "pointer (" + t.String() + ")", path
	}
	return t.Kind().String() + " (" + t.String() + ")", path
}

// ViewBytes maps *T onto mem at byte offset off. T must be pointer-free
// (CheckPointerFree), fit and be aligned there; errors match ErrInvalid. It
// uses reflection: create views at set-up.
func ViewBytes[T any](mem []byte, off int) (*T, error) {
	var zero T
	t := reflect.TypeOf(&zero).Elem()
	if err := CheckPointerFree(t); err != nil {
		return nil, err
	}
	size, align := int(t.Size()), t.Align()
	if err := checkRange(mem, off, size, align, t.String()); err != nil {
		return nil, err
	}
	if size == 0 {
		return &zero, nil
	}
	return (*T)(unsafe.Pointer(&mem[off])), nil
}

// ViewSliceBytes maps n consecutive T values onto mem at offset off, with
// the same checks as ViewBytes.
func ViewSliceBytes[T any](mem []byte, off, n int) ([]T, error) {
	var zero T
	t := reflect.TypeOf(&zero).Elem()
	if err := CheckPointerFree(t); err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("%w: negative count %d", ErrInvalid, n)
	}
	size, align := int(t.Size()), t.Align()
	if size > 0 && n > math.MaxInt/size {
		return nil, fmt.Errorf("%w: %d values of %s overflow", ErrInvalid, n, t)
	}
	if err := checkRange(mem, off, size*n, align, fmt.Sprintf("[%d]%s", n, t)); err != nil {
		return nil, err
	}
	if n == 0 || size == 0 {
		return make([]T, n), nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&mem[off])), n), nil
}

func checkRange(mem []byte, off, size, align int, what string) error {
	if off < 0 || off > len(mem) || size > len(mem)-off {
		return fmt.Errorf("%w: %s (%d bytes) at offset %d does not fit in %d bytes", ErrInvalid, what, size, off, len(mem))
	}
	if size == 0 {
		return nil
	}
	if addr := uintptr(unsafe.Pointer(&mem[off])); addr%uintptr(align) != 0 {
		return fmt.Errorf("%w: %s needs %d-byte alignment, offset %d is at address %#x", ErrInvalid, what, align, off, addr)
	}
	return nil
}

// View is ViewBytes on the segment's data (ErrClosed after Close). The
// pointer is valid until the segment is closed.
func View[T any](s *Segment, off int) (*T, error) {
	mem := s.Bytes()
	if mem == nil {
		return nil, fmt.Errorf("view %s: %w", s.name, ErrClosed)
	}
	return ViewBytes[T](mem, off)
}

// ViewSlice maps n consecutive T values onto the segment's data at offset
// off, with the same checks as View.
func ViewSlice[T any](s *Segment, off, n int) ([]T, error) {
	mem := s.Bytes()
	if mem == nil {
		return nil, fmt.Errorf("view %s: %w", s.name, ErrClosed)
	}
	return ViewSliceBytes[T](mem, off, n)
}
