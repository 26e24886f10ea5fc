"""The build cache: every cache file and fingerprint, asked by build() by key."""
