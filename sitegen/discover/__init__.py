"""Discover the archive: which folders and files are jobs, runs and trials."""
