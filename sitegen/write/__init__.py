"""Write the site into the output folder: atomic, manifest-kept, one build at a time."""
