"""``python -m sitegen``: the command line (:func:`sitegen.cli.entry`)."""

from sitegen.cli import entry

entry()
