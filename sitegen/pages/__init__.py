"""Page objects: the typed content of every page, made from jobs, runs and analyses."""
