"""``python -m sitegen``: the command line (:func:`sitegen.cli.entry`)."""

from sitegen import collect_less

# What cli.main does first, done before the command's own imports (argparse, pathlib,
# dataclasses and the model, ~25 ms), which otherwise run a young collection every 700
# new containers: ~2 ms of a one-job rebuild. (Not in sitegen.cli itself: importing a
# library module must not change the process's collector.)
collect_less()

from sitegen.cli import entry  # noqa: E402  (after the threshold, on purpose)

entry()
