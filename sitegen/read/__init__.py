"""The read stage: logs and trial files in, the frozen parsed model out.

Pure functions per file or shard; nothing here knows about the build cache.
"""
