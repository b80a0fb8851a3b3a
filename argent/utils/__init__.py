"""Small helpers with no better home, each in one place: atomic file writes, Node-style OS error texts."""
