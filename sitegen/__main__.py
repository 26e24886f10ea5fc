"""``python -m sitegen``: the command line (:func:`sitegen.commands.cli.entry`)."""

from sitegen.commands.cli import entry

entry()
