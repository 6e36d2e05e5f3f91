"""Running episodes: one at a time here; the concurrent hub executor builds on it."""
