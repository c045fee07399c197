//go:build !linux

package halctl

import (
	"fmt"
	"github.com/gortapi/gortapi/internal/errs"

	"github.com/gortapi/gortapi/rtapi/hal"
)

// Server is not available here: the peer check needs Linux's SO_PEERCRED.
type Server struct{}

// Serve fails outside Linux.
func Serve(h *hal.HAL, path string, o Options) (*Server, error) {
	return nil, fmt.Errorf("halctl: needs Linux: %w", errs.NotSupported)
}

// Path is empty.
func (s *Server) Path() string { return "" }

// Close does nothing.
func (s *Server) Close() error { return nil }

// Dial fails outside Linux.
func Dial(path string) (*Client, error) {
	return nil, fmt.Errorf("halctl: needs Linux: %w", errs.NotSupported)
}

// DialTrusting fails outside Linux.
func DialTrusting(path string, o Options) (*Client, error) { return Dial(path) }
