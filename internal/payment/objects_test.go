package payment_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/payment"
)

// TestTimestampsWriteAsTimesDo: a Timestamp is written in JSON byte for byte as time.Time writes
// the same instant in UTC, whatever its fraction of a second, as null when absent, and read back
// as that instant; a year JSON's times cannot hold is refused, as time.Time refuses it.
func TestTimestampsWriteAsTimesDo(t *testing.T) {
	type stamps struct {
		At    payment.Timestamp  `json:"at"`
		Maybe *payment.Timestamp `json:"maybe"`
	}
	type times struct {
		At    time.Time  `json:"at"`
		Maybe *time.Time `json:"maybe"`
	}
	east := time.FixedZone("UTC+5:30", 5*3600+1800)
	for _, at := range []time.Time{
		time.Date(2026, 11, 27, 11, 22, 9, 0, time.UTC),
		time.Date(2026, 11, 27, 11, 22, 9, 270638000, time.UTC),
		time.Date(2026, 11, 27, 11, 22, 9, 1, east),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		utc := at.UTC()
		for _, maybe := range []*time.Time{nil, &utc} {
			var stamp *payment.Timestamp
			if maybe != nil {
				s := payment.TimestampOf(*maybe)
				stamp = &s
			}
			got, err := json.Marshal(stamps{At: payment.TimestampOf(at), Maybe: stamp})
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(times{At: utc, Maybe: maybe})
			if !bytes.Equal(got, want) {
				t.Errorf("%v written as %s; time.Time writes %s", at, got, want)
			}
			var read stamps
			if err := json.Unmarshal(got, &read); err != nil || !time.Time(read.At).Equal(at) || (maybe == nil) != (read.Maybe == nil) {
				t.Errorf("%s read back as %v, %v (%v)", got, time.Time(read.At), read.Maybe, err)
			}
		}
	}
	if _, err := json.Marshal(stamps{At: payment.TimestampOf(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))}); err == nil {
		t.Error("the year 10000 was written; time.Time refuses it")
	}
}
