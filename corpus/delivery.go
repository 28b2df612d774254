package corpus

import (
	"bufio"
	"fmt"
	"io"

	"github.com/actfuzz/actfuzz/netenv"
)

// DeliveryTrace collects the deliveries of a topology run (the packet-level
// trace of a UDP witness seed) for its CSV file and plot.
type DeliveryTrace struct {
	rows []netenv.Delivery
}

// Add records one delivery; it is a netenv.TopoConfig.OnDelivery.
func (d *DeliveryTrace) Add(x netenv.Delivery) { d.rows = append(d.rows, x) }

// WriteCSV writes flow,seq,sent_ns,at_ns,delay_ns, one delivery per row in
// order of arrival.
func (d *DeliveryTrace) WriteCSV(w io.Writer) error {
	b := bufio.NewWriter(w)
	fmt.Fprintln(b, "flow,seq,sent_ns,at_ns,delay_ns")
	for _, r := range d.rows {
		fmt.Fprintf(b, "%d,%d,%d,%d,%d\n", r.Flow, r.Seq, int64(r.Sent), int64(r.At), int64(r.At-r.Sent))
	}
	return b.Flush()
}
