package track

// CountOutOfZone counts an attempt sent to the host from a client outside
// its zone (the router's WithLocalRack), on the host and in the tracker's
// total; neither is ever reset.
func (h *Host) CountOutOfZone() {
	h.outOfZone.Add(1)
	h.t.outOfZone.Add(1)
}

// OutOfZone returns the host's count of CountOutOfZone.
func (h *Host) OutOfZone() uint64 { return h.outOfZone.Load() }

// OutOfZone returns the count of CountOutOfZone over every host the
// tracker has had.
func (t *Tracker) OutOfZone() uint64 { return t.outOfZone.Load() }
