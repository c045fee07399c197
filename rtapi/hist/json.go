package hist

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/gortapi/gortapi/internal/errs"
)

// UnmarshalJSON decodes a snapshot encoded by encoding/json, refusing more
// than MaxBuckets counts (rtapi.ErrInvalid) before decoding them.
func (s *Snapshot) UnmarshalJSON(b []byte) error {
	type plain Snapshot // without this method
	var doc struct {
		plain
		Counts json.RawMessage `json:"counts"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return err
	}
	// n numbers have n-1 commas (a malformed array fails below).
	if n := bytes.Count(doc.Counts, []byte{','}) + 1; n > MaxBuckets {
		return fmt.Errorf("histogram: %d buckets, more than %d: %w", n, MaxBuckets, errs.Invalid)
	}
	var counts []uint64
	if err := json.Unmarshal(doc.Counts, &counts); len(doc.Counts) > 0 && err != nil {
		return fmt.Errorf("histogram counts: %w", err)
	}
	*s = Snapshot(doc.plain)
	s.Counts = counts
	return nil
}
