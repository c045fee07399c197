package scope

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/gortapi/gortapi/examples/internal/cli"
)

// WriteCSV writes the capture: a header (cycle, time_s, the names), then
// one line per sample, time in seconds from the trigger.
func WriteCSV(w io.Writer, c *Capture, names []string) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("cycle,time_s")
	for _, n := range names {
		bw.WriteString("," + csvField(n))
	}
	bw.WriteByte('\n')
	if len(c.Rows) == 0 {
		return bw.Flush()
	}
	t0 := c.Rows[max(c.Fired, 0)].Time
	var b []byte
	for _, r := range c.Rows {
		b = strconv.AppendUint(b[:0], r.Cycle, 10)
		b = append(b, ',')
		b = strconv.AppendFloat(b, float64(r.Time-t0)/1e9, 'g', -1, 64)
		for i, v := range r.Values {
			b = append(b, ',')
			b = cli.AppendValue(b, c.Types[i], v)
		}
		b = append(b, '\n')
		bw.Write(b)
	}
	return bw.Flush()
}

// csvField quotes a field with a comma, a quote or a line break.
func csvField(s string) string {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
