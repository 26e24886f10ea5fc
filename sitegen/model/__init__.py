"""The data that crosses stage boundaries: the parsed model and the domain vocabulary."""
