package hist

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gortapi/gortapi/internal/errs"
)

// A snapshot decoded from JSON is what was encoded, field for field.
func TestSnapshotJSONRoundTrip(t *testing.T) {
	t.Parallel()
	h := New(time.Microsecond, 10*time.Microsecond)
	for _, d := range []time.Duration{-3000, 500, 2500, 2600, 50_000} {
		h.Record(d)
	}
	want := h.Snapshot()
	b, err := json.Marshal(want)
	require.NoError(t, err)
	var got Snapshot
	require.NoError(t, json.Unmarshal(b, &got))
	require.Equal(t, want, got)
	require.NoError(t, json.Unmarshal([]byte(`{"counts":null}`), &got))
	require.Nil(t, got.Counts)
}

// A JSON histogram of more than MaxBuckets counts is refused before its
// counts are decoded: a file cannot make a reader allocate more than a
// histogram can hold. (It used to decode them all, and leave the refusal
// to whoever looked at them.)
func TestSnapshotJSONRefusesTooManyBuckets(t *testing.T) {
	t.Parallel()
	var doc bytes.Buffer
	doc.WriteString(`{"bucket_width_ns":1000,"counts":[1`)
	for range MaxBuckets {
		doc.WriteString(",0")
	}
	doc.WriteString(`],"overflow":0,"count":1}`)
	var s Snapshot
	err := json.Unmarshal(doc.Bytes(), &s)
	require.ErrorIs(t, err, errs.Invalid)
	require.Contains(t, err.Error(), "more than")
	require.Nil(t, s.Counts)

	for _, bad := range []string{`{"counts":[1,"x"]}`, `{"counts":{}}`, `{"counts":[-1]}`} {
		require.Error(t, json.Unmarshal([]byte(bad), &s), bad)
	}
}
