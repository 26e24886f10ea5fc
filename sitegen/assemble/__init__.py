"""Assemble jobs and runs (resume chains stitched) from what was read."""
